-- One deployment's login role (R-BIND-4), made or updated by `binding setup --role`: a member of
-- rotifer_deployment, with the timeouts that keep one host from stalling the others (R-BIND-6).
-- Runs with its caller's rights (the administrator's: it creates a role); nobody else may call it.
-- `p_test_clock`: calls of the role may give their own time (test clusters only).
CREATE OR REPLACE FUNCTION rotifer.setup_role(p_role name, p_test_clock boolean) RETURNS void
LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, rotifer, pg_temp AS $$
BEGIN
  IF p_role IN ('rotifer_owner', 'rotifer_deployment') OR p_role LIKE 'pg\_%' THEN
    RAISE EXCEPTION 'role name % is reserved', p_role;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = p_role) THEN
    EXECUTE format('CREATE ROLE %I LOGIN', p_role);
  ELSIF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = p_role AND (rolsuper OR rolbypassrls OR rolcreaterole)) THEN
    RAISE EXCEPTION 'role % is a superuser, creates roles or bypasses row-level security: a deployment needs a role of its own', p_role;
  ELSIF p_role = current_user OR pg_has_role(p_role, 'rotifer_owner', 'MEMBER')
        OR EXISTS (SELECT 1 FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid
                   WHERE m.member = (SELECT oid FROM pg_roles WHERE rolname = p_role) AND g.rolname <> 'rotifer_deployment') THEN
    RAISE EXCEPTION 'role % is the administrator, can act as the schema''s owner or is a member of other roles: a deployment needs a role of its own', p_role;
  END IF;
  EXECUTE format('GRANT rotifer_deployment TO %I', p_role);
  EXECUTE format('ALTER ROLE %I SET statement_timeout = %L', p_role, '8s');
  EXECUTE format('ALTER ROLE %I SET lock_timeout = %L', p_role, '4s');
  EXECUTE format('ALTER ROLE %I SET idle_in_transaction_session_timeout = %L', p_role, '10s');
  INSERT INTO rotifer.roles (role_name, test_clock) VALUES (p_role, p_test_clock)
    ON CONFLICT (role_name) DO UPDATE SET test_clock = EXCLUDED.test_clock;
END $$;
