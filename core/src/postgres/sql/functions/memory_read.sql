-- readMemory (R-API-1): the agent's lock (a read may purge, and records its reader), the purge,
-- identity, the read scope. A denial's audit row commits although the call is refused.
CREATE OR REPLACE FUNCTION rotifer.memory_read(
  p_agent text, p_gene text, p_domain text, p_key text, p_category text, p_now bigint
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
  -- Most reads change nothing: nothing of the agent has expired, and the reader already is the
  -- entry's last accessor (or there is no entry). Those take no lock and write nothing, as on
  -- the file; any other read takes the agent's lock below and is judged again there. (Between
  -- the two statements another host may commit a change, but not an entry already expired.)
  IF rotifer.valid_gene(p_gene) AND p_key IS NOT NULL AND octet_length(p_key) BETWEEN 1 AND 1024
     AND (p_category IS NULL OR p_category IN ('CACHE', 'PATTERN', 'CONTEXT', 'PREFERENCE'))
     AND (p_domain IS NULL OR p_domain ~ '^[a-z0-9]+(\.[a-z0-9]+)*$') THEN
    v_now := rotifer.clock_ms(p_now);
    IF EXISTS (SELECT 1 FROM rotifer.agents WHERE agent_id = p_agent AND fence IS NULL)
       AND coalesce((SELECT min(expires_at) FROM rotifer.entries WHERE agent_id = p_agent) > v_now, true) THEN
      SELECT * INTO e FROM rotifer.entries WHERE agent_id = p_agent AND key = p_key;
      IF NOT FOUND OR (p_category IS NOT NULL AND e.category <> p_category) THEN
        RETURN ROW('none', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)::rotifer.call_result;
      END IF;
      IF e.last_accessed_by = p_gene AND rotifer.admits(e.read_scope, e.created_by, e.creator_domain, p_gene, p_domain) THEN
        RETURN rotifer.answer(e);
      END IF;
    END IF;
  END IF;

  a := rotifer.lock_agent(p_agent, true);
  v_now := rotifer.clock_ms(p_now);
  v_tx := a.last_tx + 1;
  IF NOT rotifer.valid_gene(p_gene) THEN
    RETURN rotifer.deny_unidentified(p_agent, v_now, p_key, 'read', a);
  END IF;
  v_purged := rotifer.purge(p_agent, v_now, v_tx, 0);
  IF p_key IS NULL OR octet_length(p_key) NOT BETWEEN 1 AND 1024
     OR (p_category IS NOT NULL AND p_category NOT IN ('CACHE', 'PATTERN', 'CONTEXT', 'PREFERENCE'))
     OR (p_domain IS NOT NULL AND p_domain !~ '^[a-z0-9]+(\.[a-z0-9]+)*$') THEN
    PERFORM rotifer.finish(p_agent, v_now, v_tx, v_purged.lines, a.used_bytes - v_purged.freed, a.last_seq, 0);
    RETURN rotifer.refusal('MEMORY_INVALID_INPUT', 'the key, category or domain is not valid', NULL);
  END IF;
  SELECT * INTO e FROM rotifer.entries WHERE agent_id = p_agent AND key = p_key;
  IF NOT FOUND OR (p_category IS NOT NULL AND e.category <> p_category) THEN
    PERFORM rotifer.finish(p_agent, v_now, v_tx, v_purged.lines, a.used_bytes - v_purged.freed, a.last_seq, 0);
    RETURN ROW('none', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)::rotifer.call_result;
  END IF;
  IF NOT rotifer.admits(e.read_scope, e.created_by, e.creator_domain, p_gene, p_domain) THEN
    v_reason := rotifer.denial_reason('read', 'readScope', e.read_scope);
    PERFORM rotifer.audit_row(p_agent, v_now, NULL, NULL, 'memory.access_denied', p_gene, p_key, e.category, e.size,
      jsonb_build_object('op', 'read', 'code', 'MEMORY_ACCESS_DENIED', 'reason', v_reason));
    PERFORM rotifer.finish(p_agent, v_now, rotifer.tx_if(v_purged.lines, v_tx), v_purged.lines + 1, a.used_bytes - v_purged.freed, a.last_seq, 0);
    RETURN rotifer.refusal('MEMORY_ACCESS_DENIED', v_reason, NULL);
  END IF;
  IF e.last_accessed_by <> p_gene THEN
    UPDATE rotifer.entries SET last_accessed_by = p_gene WHERE agent_id = p_agent AND key = p_key;
    e.last_accessed_by := p_gene;
  END IF;
  PERFORM rotifer.finish(p_agent, v_now, v_tx, v_purged.lines, a.used_bytes - v_purged.freed, a.last_seq, 0);
  RETURN rotifer.answer(e);
END $$;
