-- deleteMemory (R-API-4): the agent's lock, the purge, identity, existence, the write scope.
CREATE OR REPLACE FUNCTION rotifer.memory_delete(
  p_agent text, p_gene text, p_domain text, p_key text, p_now bigint, p_attempt text
) RETURNS rotifer.call_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  a rotifer.agents;
  e rotifer.entries;
  v_now bigint;
  v_tx bigint;
  v_purged record;
  v_reason text;
BEGIN
  a := rotifer.lock_agent(p_agent, true);
  v_now := rotifer.clock_ms(p_now);
  v_tx := a.last_tx + 1;
  IF NOT rotifer.valid_gene(p_gene) THEN
    RETURN rotifer.deny_unidentified(p_agent, v_now, p_key, 'delete', a);
  END IF;
  v_purged := rotifer.purge(p_agent, v_now, v_tx, 0);
  IF p_key IS NULL OR octet_length(p_key) NOT BETWEEN 1 AND 1024
     OR (p_domain IS NOT NULL AND p_domain !~ '^[a-z0-9]+(\.[a-z0-9]+)*$') THEN
    PERFORM rotifer.finish(p_agent, v_now, v_tx, v_purged.lines, a.used_bytes - v_purged.freed, a.last_seq, 0);
    RETURN rotifer.refusal('MEMORY_INVALID_INPUT', 'the key or domain is not valid', NULL);
  END IF;
  SELECT * INTO e FROM rotifer.entries WHERE agent_id = p_agent AND key = p_key;
  IF NOT FOUND THEN
    PERFORM rotifer.finish(p_agent, v_now, v_tx, v_purged.lines, a.used_bytes - v_purged.freed, a.last_seq, 0);
    RETURN rotifer.refusal('MEMORY_NOT_FOUND', NULL, NULL);
  END IF;
  IF NOT rotifer.admits(e.write_scope, e.created_by, e.creator_domain, p_gene, p_domain) THEN
    v_reason := rotifer.denial_reason('delete', 'writeScope', e.write_scope);
    PERFORM rotifer.audit_row(p_agent, v_now, NULL, NULL, 'memory.access_denied', p_gene, p_key, e.category, e.size,
      jsonb_build_object('op', 'delete', 'code', 'MEMORY_ACCESS_DENIED', 'reason', v_reason));
    PERFORM rotifer.finish(p_agent, v_now, rotifer.tx_if(v_purged.lines, v_tx), v_purged.lines + 1, a.used_bytes - v_purged.freed, a.last_seq, 0);
    RETURN rotifer.refusal('MEMORY_ACCESS_DENIED', v_reason, NULL);
  END IF;
  PERFORM rotifer.audit_row(p_agent, v_now, v_tx, v_purged.lines + 1, 'memory.delete', p_gene, p_key, e.category, e.size, NULL);
  DELETE FROM rotifer.entries WHERE agent_id = p_agent AND key = p_key;
  IF p_attempt IS NOT NULL THEN
    INSERT INTO rotifer.attempts (attempt_id, agent_id, at_ms) VALUES (p_attempt, p_agent, v_now);
  END IF;
  PERFORM rotifer.finish(p_agent, v_now, v_tx, v_purged.lines + 1, a.used_bytes - v_purged.freed - e.size, a.last_seq, 0);
  RETURN ROW('ok', NULL, NULL, NULL, e.entry_id, e.category, e.key, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)::rotifer.call_result;
END $$;
