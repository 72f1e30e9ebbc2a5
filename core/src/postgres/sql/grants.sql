-- After every (re)creation of the functions: nobody executes anything of the schema but the
-- call functions, and those only through rotifer_deployment. Run in the same transaction as the
-- functions' creation, so there is no moment when PUBLIC may call them.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA rotifer FROM PUBLIC;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA rotifer FROM rotifer_deployment;
GRANT EXECUTE ON FUNCTION
  rotifer.memory_read(text, text, text, text, text, bigint),
  rotifer.memory_write(text, text, text, text, bytea, text, jsonb, boolean, jsonb, bigint, text),
  rotifer.memory_query(text, text, text, text, text, bigint, bigint, integer, bigint),
  rotifer.memory_delete(text, text, text, text, bigint, text),
  rotifer.agent_usage(text, bigint),
  rotifer.agent_get(text, text, bigint),
  rotifer.memory_list(text, text, text, text, integer, boolean, bigint),
  rotifer.memory_deployer_delete(text, text, text, text, bigint),
  rotifer.agent_configure(text, bigint, boolean, integer, boolean),
  rotifer.memory_drop_agent(text),
  rotifer.attempt_settle(text, text),
  rotifer.memory_import(text, bigint, bigint, bigint, boolean, integer, jsonb, bytea[], bigint),
  rotifer.memory_restore(text, jsonb, bytea[], bigint, bigint, text, bigint),
  rotifer.migrate_hold(text, bigint),
  rotifer.migrate_arrive(text, bigint, boolean, integer),
  rotifer.migrate_mark(text, jsonb, text, bigint),
  rotifer.migrate_arrived(text, text)
TO rotifer_deployment;
