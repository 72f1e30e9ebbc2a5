-- importAgentMemory (R-MIG-3) on the server: the entries of a bundle the client has checked and
-- planned (which to create, which to replace, the bytes after), written in one transaction with an
-- audit row each (actor "deployer"). The plan was made against the agent as the client read it;
-- if the agent changed since (another write, a purge, its limits: `p_expect_*`), nothing is
-- written and the answer is `changed`, so the client plans again. Every rule is checked here again
-- (a role may call this with anything): a plan that breaks one is refused whole.
--
-- p_entries: a JSON array, one object per entry in bundle order: key, category, created_by,
-- creator_domain, created_at, updated_at, read_scope, write_scope, share_policy, ret_set, ret_days,
-- ret_auto_delete, ret_anonymization, replaces; p_values: their values, in the same order.
CREATE OR REPLACE FUNCTION rotifer.memory_import(
  p_agent text, p_expect_seq bigint, p_expect_used bigint, p_expect_quota bigint,
  p_expect_anonymization boolean, p_expect_days integer, p_entries jsonb, p_values bytea[], p_now bigint
) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  a rotifer.agents;
  v_now bigint;
  v_tx bigint;
  v_purged record;
  v_lines integer;
  v_used bigint;
  v_seq bigint;
  v_last_ms bigint := 0;
  v_n integer;
  j jsonb;
  v_key text;
  v_value bytea;
  v_size bigint;
  v_old bigint;
  v_updated bigint;
BEGIN
  IF p_entries IS NULL OR jsonb_typeof(p_entries) <> 'array' OR p_values IS NULL
     OR jsonb_array_length(p_entries) <> coalesce(array_length(p_values, 1), 0) THEN
    RAISE EXCEPTION 'the entries and their values do not match' USING ERRCODE = 'RT002';
  END IF;
  a := rotifer.lock_agent(p_agent, false);
  IF a.agent_id IS NULL THEN
    RETURN 'changed';
  END IF;
  v_now := rotifer.clock_ms(p_now);
  v_tx := a.last_tx + 1;
  v_purged := rotifer.purge(p_agent, v_now, v_tx, 0);
  v_lines := v_purged.lines;
  v_used := a.used_bytes - v_purged.freed;
  IF a.last_seq IS DISTINCT FROM p_expect_seq OR v_used IS DISTINCT FROM p_expect_used OR a.quota IS DISTINCT FROM p_expect_quota
     OR a.anonymization_supported IS DISTINCT FROM p_expect_anonymization OR a.max_retention_days IS DISTINCT FROM p_expect_days THEN
    PERFORM rotifer.finish(p_agent, v_now, v_tx, v_lines, v_used, a.last_seq, 0);
    RETURN 'changed';
  END IF;
  v_seq := a.last_seq;
  v_n := jsonb_array_length(p_entries);
  FOR i IN 1 .. v_n LOOP
    j := p_entries -> (i - 1);
    v_key := j->>'key';
    v_value := p_values[i];
    v_updated := (j->>'updated_at')::bigint;
    IF v_key IS NULL OR v_value IS NULL OR (j->>'ret_set') IS NULL OR v_updated IS NULL THEN
      RAISE EXCEPTION 'entry % of the import is not valid', i USING ERRCODE = 'RT002';
    END IF;
    SELECT size INTO v_old FROM rotifer.entries WHERE agent_id = p_agent AND key = v_key;
    IF FOUND IS DISTINCT FROM (j->>'replaces')::boolean THEN
      RAISE EXCEPTION 'entry % of the import does not match the agent (key %)', i, v_key USING ERRCODE = 'RT002';
    END IF;
    v_size := octet_length(v_key) + octet_length(v_value);
    v_used := v_used - coalesce(v_old, 0) + v_size;
    v_seq := v_seq + 1;
    v_lines := v_lines + 1;
    v_last_ms := greatest(v_last_ms, v_updated);
    PERFORM rotifer.audit_row(p_agent, v_now, v_tx, v_lines, CASE WHEN v_old IS NULL THEN 'memory.create' ELSE 'memory.update' END,
      'deployer', v_key, j->>'category', v_size, NULL);
    -- lastAccessedBy becomes createdBy (R-MIG-3); the entry takes the next number.
    PERFORM rotifer.put_brought_entry('import', i, j || jsonb_build_object('last_accessed_by', j->>'created_by', 'seq', v_seq), v_value, a, v_now);
  END LOOP;
  IF v_used > a.quota THEN
    RAISE EXCEPTION 'the import would hold % bytes, over the agent''s quota of % bytes', v_used, a.quota USING ERRCODE = 'RT002';
  END IF;
  PERFORM rotifer.finish(p_agent, v_now, v_tx, v_lines, v_used, v_seq, v_last_ms);
  RETURN 'ok';
END $$;
