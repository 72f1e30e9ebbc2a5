-- deleteAgentMemory (R-HOST-2): the deployer deletes one key, or every entry of a category
-- and/or key prefix, whatever their access policy; each deletion audited with actor
-- "deployer", in one transaction with what has expired by now (purged first, R-RET-4). Answers
-- how many were deleted; a missing key is refused with MEMORY_NOT_FOUND (nothing changes), and
-- so is any key of an agent with no memory. A selection that matches nothing deletes 0.
CREATE OR REPLACE FUNCTION rotifer.memory_deployer_delete(
  p_agent text, p_key text, p_category text, p_prefix text, p_now bigint,
  OUT outcome text, OUT deleted bigint
) LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  a rotifer.agents;
  v_now bigint;
  v_tx bigint;
  v_purged record;
  v_end text;
  v_lines integer;
  v_freed bigint := 0;
  r record;
BEGIN
  IF (p_key IS NULL) = (p_category IS NULL AND (p_prefix IS NULL OR p_prefix = ''))
     OR (p_key IS NOT NULL AND (p_category IS NOT NULL OR p_prefix IS NOT NULL))
     OR (p_key IS NOT NULL AND octet_length(p_key) NOT BETWEEN 1 AND 1024)
     OR (p_category IS NOT NULL AND p_category NOT IN ('CACHE', 'PATTERN', 'CONTEXT', 'PREFERENCE')) THEN
    RAISE EXCEPTION 'give a key alone, or a category and/or a non-empty key prefix' USING ERRCODE = 'RT002';
  END IF;
  a := rotifer.lock_agent(p_agent, false);
  v_now := rotifer.clock_ms(p_now);
  deleted := 0;
  IF a.agent_id IS NULL THEN
    outcome := CASE WHEN p_key IS NULL THEN 'ok' ELSE 'not_found' END;
    RETURN;
  END IF;
  v_tx := a.last_tx + 1;
  v_purged := rotifer.purge(p_agent, v_now, v_tx, 0);
  v_lines := v_purged.lines;
  IF p_key IS NOT NULL AND NOT EXISTS (SELECT 1 FROM rotifer.entries e WHERE e.agent_id = p_agent AND e.key = p_key) THEN
    PERFORM rotifer.finish(p_agent, v_now, v_tx, v_lines, a.used_bytes - v_purged.freed, a.last_seq, 0);
    outcome := 'not_found';
    RETURN;
  END IF;
  v_end := CASE WHEN p_prefix IS NULL OR p_prefix = '' THEN NULL ELSE rotifer.prefix_end(p_prefix) END;
  FOR r IN
    SELECT e.key, e.category, e.size FROM rotifer.entries e
    WHERE e.agent_id = p_agent
      AND (p_key IS NULL OR e.key = p_key)
      AND (p_category IS NULL OR e.category = p_category)
      AND (p_prefix IS NULL OR p_prefix = '' OR (e.key >= p_prefix AND (v_end IS NULL OR e.key < v_end)))
    ORDER BY e.updated_at, e.seq
  LOOP
    v_lines := v_lines + 1;
    PERFORM rotifer.audit_row(p_agent, v_now, v_tx, v_lines, 'memory.delete', 'deployer', r.key, r.category, r.size, NULL);
    DELETE FROM rotifer.entries e WHERE e.agent_id = p_agent AND e.key = r.key;
    v_freed := v_freed + r.size;
    deleted := deleted + 1;
  END LOOP;
  PERFORM rotifer.finish(p_agent, v_now, v_tx, v_lines, a.used_bytes - v_purged.freed - v_freed, a.last_seq, 0);
  outcome := 'ok';
END $$;
