-- restoreAgentMemory (R-HOST-1b) on the server: every entry of the agent replaced by those of a
-- backup the client has read and checked, as one change with one audit row (`memory.restore`,
-- actor "deployer", the bytes held after it). Entries keep their times, creators, last accessors
-- and sequence numbers; the agent keeps its quota and data policy, and its sequence number goes
-- past both its own and the backup's (`p_backup_seq`). Every rule is checked here again (a role
-- may call this with anything): a restore that breaks one is refused whole.
--
-- p_entries: a JSON array, one object per entry in write order: key, category, created_by,
-- creator_domain, last_accessed_by, created_at, updated_at, seq, read_scope, write_scope,
-- share_policy, ret_set, ret_days, ret_auto_delete, ret_anonymization; p_values: their values.
-- `p_reason` (the audit row's words) names how many entries are replaced, `p_expect_replaced`: if
-- the agent holds another number by the time the lock is held, nothing is restored and the answer
-- is NULL, so the client reads it again. Otherwise it answers that number.
CREATE OR REPLACE FUNCTION rotifer.memory_restore(
  p_agent text, p_entries jsonb, p_values bytea[], p_backup_seq bigint, p_expect_replaced bigint, p_reason text, p_now bigint
) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  a rotifer.agents;
  v_now bigint;
  v_tx bigint;
  v_replaced bigint;
  v_purged record;
  v_used bigint := 0;
  v_seq bigint;
  v_last_ms bigint := 0;
  j jsonb;
  v_key text;
  v_value bytea;
  v_updated bigint;
BEGIN
  IF p_entries IS NULL OR jsonb_typeof(p_entries) <> 'array' OR p_values IS NULL
     OR jsonb_array_length(p_entries) <> coalesce(array_length(p_values, 1), 0)
     OR p_backup_seq IS NULL OR p_backup_seq NOT BETWEEN 0 AND 4503599627370496 OR p_reason IS NULL THEN
    RAISE EXCEPTION 'the entries, their values or the backup''s number are not valid' USING ERRCODE = 'RT002';
  END IF;
  a := rotifer.lock_agent(p_agent, true);
  v_now := rotifer.clock_ms(p_now);
  v_tx := a.last_tx + 1;
  -- What has expired goes first, audited, as before any change (R-RET-4).
  v_purged := rotifer.purge(p_agent, v_now, v_tx, 0);
  SELECT count(*) INTO v_replaced FROM rotifer.entries WHERE agent_id = p_agent;
  IF v_replaced IS DISTINCT FROM p_expect_replaced THEN
    PERFORM rotifer.finish(p_agent, v_now, v_tx, v_purged.lines, a.used_bytes - v_purged.freed, a.last_seq, 0);
    RETURN NULL;
  END IF;
  DELETE FROM rotifer.entries WHERE agent_id = p_agent;
  v_seq := greatest(a.last_seq, p_backup_seq);
  FOR i IN 1 .. jsonb_array_length(p_entries) LOOP
    j := p_entries -> (i - 1);
    v_key := j->>'key';
    v_value := p_values[i];
    v_updated := (j->>'updated_at')::bigint;
    IF v_key IS NULL OR v_value IS NULL OR (j->>'ret_set') IS NULL OR v_updated IS NULL OR (j->>'seq') IS NULL
       OR (j->>'seq')::bigint NOT BETWEEN 1 AND p_backup_seq THEN
      RAISE EXCEPTION 'entry % of the restore is not valid', i USING ERRCODE = 'RT002';
    END IF;
    v_used := v_used + octet_length(v_key) + octet_length(v_value);
    v_last_ms := greatest(v_last_ms, v_updated);
    IF EXISTS (SELECT 1 FROM rotifer.entries WHERE agent_id = p_agent AND key = v_key) THEN
      RAISE EXCEPTION 'entry % of the restore repeats the key %', i, v_key USING ERRCODE = 'RT002';
    END IF;
    PERFORM rotifer.put_brought_entry('restore', i, j, v_value, a, v_now);
  END LOOP;
  IF v_used > a.quota THEN
    RAISE EXCEPTION 'the restore would hold % bytes, over the agent''s quota of % bytes', v_used, a.quota USING ERRCODE = 'RT002';
  END IF;
  PERFORM rotifer.audit_row(p_agent, v_now, v_tx, v_purged.lines + 1, 'memory.restore', 'deployer', NULL, NULL, v_used,
    jsonb_build_object('reason', p_reason));
  PERFORM rotifer.finish(p_agent, v_now, v_tx, v_purged.lines + 1, v_used, v_seq + 1, v_last_ms);
  RETURN v_replaced;
END $$;
