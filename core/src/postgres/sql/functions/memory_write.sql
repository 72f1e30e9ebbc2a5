-- writeMemory (R-API-2, R-QUO-3/4, R-ACC, R-POL, R-RET): one call, one transaction. The client
-- has validated the arguments with the contract's own code; this checks them again (a role may
-- call it with anything), then: the agent's lock, the clock, the purge, identity, scopes and the
-- data policy, room (eviction CACHE → PATTERN → CONTEXT, oldest first, or a refusal that changes
-- nothing), the audit rows, the entry.
--
-- p_access: NULL = omitted (defaults for a new entry, kept for an existing one), else
--   {"readScope","writeScope","sharePolicy"}.
-- p_retention_given: false = omitted; true with p_retention NULL = back to the agent's policy;
--   else {"maxRetentionDays","autoDeleteOnTermination","anonymizationSupported"}.
-- p_attempt: the client's id for this attempt (32 hex digits), recorded with the change so a lost
--   commit acknowledgement can be resolved (R-BIND-6); NULL for none.
CREATE OR REPLACE FUNCTION rotifer.memory_write(
  p_agent text, p_gene text, p_domain text, p_key text, p_value bytea, p_category text,
  p_access jsonb, p_retention_given boolean, p_retention jsonb, p_now bigint, p_attempt text
) RETURNS rotifer.call_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  a rotifer.agents;
  old rotifer.entries;
  e rotifer.entries;
  v_now bigint;
  v_time bigint;
  v_tx bigint;
  v_lines integer := 0;
  v_purged record;
  v_used bigint;
  v_size bigint;
  v_old_size bigint := 0;
  v_after bigint;
  v_need bigint;
  v_freed bigint := 0;
  v_exists boolean;
  v_read text; v_write text; v_share text;
  v_ret_set boolean; v_ret_days integer; v_ret_auto boolean; v_ret_anon boolean;
  v_reason text;
  v_victim record;
  v_floor bigint;
BEGIN
  a := rotifer.lock_agent(p_agent, true);
  v_now := rotifer.clock_ms(p_now);
  -- R-ENT-4: no time before the latest one stored when the call began (as on the file: the
  -- latest of the entries there are, before this call purges or evicts any).
  SELECT max(updated_at) INTO v_floor FROM rotifer.entries WHERE agent_id = p_agent;
  v_tx := a.last_tx + 1;
  v_used := a.used_bytes;

  -- Identity first (R-ACC-4): denied before anything else, the denial recorded.
  IF NOT rotifer.valid_gene(p_gene) THEN
    RETURN rotifer.deny_unidentified(p_agent, v_now, p_key, 'write', a);
  END IF;

  v_purged := rotifer.purge(p_agent, v_now, v_tx, 0);
  v_lines := v_purged.lines;
  v_used := v_used - v_purged.freed;

  -- Input (the client checked it; a role calling directly meets the same rules).
  IF p_key IS NULL OR octet_length(p_key) NOT BETWEEN 1 AND 1024 OR p_value IS NULL OR octet_length(p_value) > 1048576
     OR p_category IS NULL OR p_category NOT IN ('CACHE', 'PATTERN', 'CONTEXT', 'PREFERENCE')
     OR (p_domain IS NOT NULL AND p_domain !~ '^[a-z0-9]+(\.[a-z0-9]+)*$') THEN
    PERFORM rotifer.finish(p_agent, v_now, v_tx, v_lines, v_used, a.last_seq, 0);
    RETURN rotifer.refusal('MEMORY_INVALID_INPUT', 'the key, value, category or domain is not valid', NULL);
  END IF;
  IF p_access IS NOT NULL AND NOT (
       jsonb_typeof(p_access) = 'object'
       AND (SELECT count(*) FROM jsonb_object_keys(p_access)) = 3
       AND p_access->>'readScope' IN ('CREATOR_GENE_ONLY', 'SAME_DOMAIN', 'ALL_GENES', 'DEPLOYER_CONFIGURED')
       AND p_access->>'writeScope' IN ('CREATOR_GENE_ONLY', 'SAME_DOMAIN', 'ALL_GENES', 'DEPLOYER_CONFIGURED')
       AND p_access->>'sharePolicy' IN ('PRIVATE', 'ANONYMIZED_SHARE', 'KNOWLEDGE_GENE')) THEN
    PERFORM rotifer.finish(p_agent, v_now, v_tx, v_lines, v_used, a.last_seq, 0);
    RETURN rotifer.refusal('MEMORY_INVALID_INPUT', 'accessPolicy is not valid', NULL);
  END IF;
  IF p_retention_given AND p_retention IS NOT NULL AND NOT (
       jsonb_typeof(p_retention) = 'object'
       AND (SELECT count(*) FROM jsonb_object_keys(p_retention)) = 3
       AND jsonb_typeof(p_retention->'autoDeleteOnTermination') = 'boolean'
       AND jsonb_typeof(p_retention->'anonymizationSupported') = 'boolean'
       AND (jsonb_typeof(p_retention->'maxRetentionDays') = 'null'
            OR (jsonb_typeof(p_retention->'maxRetentionDays') = 'number'
                AND (p_retention->>'maxRetentionDays') ~ '^[0-9]{1,10}$'
                AND (p_retention->>'maxRetentionDays')::bigint BETWEEN 1 AND 2147483647))) THEN
    PERFORM rotifer.finish(p_agent, v_now, v_tx, v_lines, v_used, a.last_seq, 0);
    RETURN rotifer.refusal('MEMORY_INVALID_INPUT', 'retentionPolicy is not valid', NULL);
  END IF;

  v_size := octet_length(p_key) + octet_length(p_value);
  SELECT * INTO old FROM rotifer.entries WHERE agent_id = p_agent AND key = p_key;
  v_exists := FOUND;

  -- The policies the entry will have (R-API-2): omitted ones kept, or the defaults.
  IF v_exists THEN
    v_old_size := old.size;
    v_read := coalesce(p_access->>'readScope', old.read_scope);
    v_write := coalesce(p_access->>'writeScope', old.write_scope);
    v_share := coalesce(p_access->>'sharePolicy', old.share_policy);
    IF NOT p_retention_given THEN
      v_ret_set := old.ret_set; v_ret_days := old.ret_days; v_ret_auto := old.ret_auto_delete; v_ret_anon := old.ret_anonymization;
    END IF;
  ELSE
    v_read := coalesce(p_access->>'readScope', 'SAME_DOMAIN');
    v_write := coalesce(p_access->>'writeScope', 'SAME_DOMAIN');
    v_share := coalesce(p_access->>'sharePolicy', 'PRIVATE');
    IF NOT p_retention_given THEN
      v_ret_set := false; v_ret_days := NULL; v_ret_auto := false; v_ret_anon := false;
    END IF;
  END IF;
  IF p_retention_given THEN
    IF p_retention IS NULL THEN
      v_ret_set := false; v_ret_days := NULL; v_ret_auto := false; v_ret_anon := false;
    ELSE
      v_ret_set := true;
      v_ret_days := (p_retention->>'maxRetentionDays')::integer;
      v_ret_auto := (p_retention->>'autoDeleteOnTermination')::boolean;
      v_ret_anon := (p_retention->>'anonymizationSupported')::boolean;
    END IF;
  END IF;

  -- Who may write (R-ACC-3), who may change policies (R-API-2), what this version and the data
  -- policy allow (R-ACC table, R-POL-1/2). The first that fails is the denial.
  IF v_exists AND NOT rotifer.admits(old.write_scope, old.created_by, old.creator_domain, p_gene, p_domain) THEN
    v_reason := rotifer.denial_reason('write', 'writeScope', old.write_scope);
  ELSIF v_exists AND p_gene <> old.created_by
        AND (v_read, v_write, v_share) IS DISTINCT FROM (old.read_scope, old.write_scope, old.share_policy) THEN
    v_reason := 'only the entry''s creator may change its accessPolicy; omit accessPolicy to keep it';
  ELSIF v_exists AND p_gene <> old.created_by
        AND (v_ret_set, v_ret_days, v_ret_auto, v_ret_anon) IS DISTINCT FROM (old.ret_set, old.ret_days, old.ret_auto_delete, old.ret_anonymization) THEN
    v_reason := 'only the entry''s creator may change its retentionPolicy; omit retentionPolicy to keep it';
  ELSIF v_read = 'DEPLOYER_CONFIGURED' OR v_write = 'DEPLOYER_CONFIGURED' THEN
    v_reason := 'DEPLOYER_CONFIGURED scopes cannot be set in this version: the data policy has no such setting yet; use CREATOR_GENE_ONLY, SAME_DOMAIN or ALL_GENES';
  ELSIF v_share IN ('ANONYMIZED_SHARE', 'KNOWLEDGE_GENE') AND NOT a.anonymization_supported THEN
    v_reason := 'sharePolicy ' || v_share || ' needs a data policy that supports anonymization, and this agent''s does not; use PRIVATE or ask the deployer';
  ELSIF a.max_retention_days IS NOT NULL AND v_ret_set AND v_ret_days IS NULL THEN
    v_reason := 'retentionPolicy.maxRetentionDays null (forever) exceeds this agent''s maximum of ' || a.max_retention_days || ' days';
  ELSIF a.max_retention_days IS NOT NULL AND v_ret_set AND v_ret_days > a.max_retention_days THEN
    v_reason := 'retentionPolicy.maxRetentionDays ' || v_ret_days || ' exceeds this agent''s maximum of ' || a.max_retention_days || ' days';
  END IF;
  IF v_reason IS NOT NULL THEN
    v_lines := v_lines + 1;
    PERFORM rotifer.audit_row(p_agent, v_now, NULL, NULL, 'memory.access_denied', p_gene, p_key, p_category, v_size,
      jsonb_build_object('op', 'write', 'code', 'MEMORY_ACCESS_DENIED', 'reason', v_reason));
    PERFORM rotifer.finish(p_agent, v_now, rotifer.tx_if(v_purged.lines, v_tx), v_lines, v_used, a.last_seq, 0);
    RETURN rotifer.refusal('MEMORY_ACCESS_DENIED', v_reason, NULL);
  END IF;

  -- Room (R-QUO-3/4): only a write that grows the total past the quota evicts, and only what
  -- brings it back; if every evictable entry would not do, nothing changes.
  v_after := v_used - v_old_size + v_size;
  IF v_size > v_old_size AND v_after > a.quota THEN
    v_need := v_after - a.quota;
    SELECT coalesce(sum(size), 0) INTO v_freed FROM (
      SELECT size FROM rotifer.entries
      WHERE agent_id = p_agent AND category IN ('CACHE', 'PATTERN', 'CONTEXT') AND key <> p_key
    ) s;
    IF v_freed < v_need THEN
      v_lines := v_lines + 1;
      PERFORM rotifer.audit_row(p_agent, v_now, NULL, NULL, 'memory.quota_reject', p_gene, p_key, p_category, v_size,
        jsonb_build_object('quota', a.quota, 'used', v_used, 'evictable', v_freed, 'needed', v_need));
      PERFORM rotifer.finish(p_agent, v_now, rotifer.tx_if(v_purged.lines, v_tx), v_lines, v_used, a.last_seq, 0);
      RETURN rotifer.refusal('MEMORY_QUOTA_EXCEEDED', NULL,
        jsonb_build_object('size', v_size, 'quota', a.quota));
    END IF;
    v_freed := 0;
    FOR v_victim IN
      SELECT key, category, size FROM rotifer.entries
      WHERE agent_id = p_agent AND category IN ('CACHE', 'PATTERN', 'CONTEXT') AND key <> p_key
      ORDER BY CASE category WHEN 'CACHE' THEN 0 WHEN 'PATTERN' THEN 1 ELSE 2 END, updated_at, seq
    LOOP
      EXIT WHEN v_freed >= v_need;
      DELETE FROM rotifer.entries WHERE agent_id = p_agent AND key = v_victim.key;
      v_freed := v_freed + v_victim.size;
      v_lines := v_lines + 1;
      PERFORM rotifer.audit_row(p_agent, v_now, v_tx, v_lines, 'memory.evict', NULL, v_victim.key, v_victim.category, v_victim.size, NULL);
    END LOOP;
    v_after := v_after - v_freed;
  END IF;

  -- The entry (R-ENT-4: its time never before the latest stored, nor before what it replaces).
  v_time := greatest(v_now, coalesce(v_floor, v_now));
  v_lines := v_lines + 1;
  IF v_exists THEN
    v_time := greatest(v_time, old.updated_at, old.created_at);
    PERFORM rotifer.audit_row(p_agent, v_now, v_tx, v_lines, 'memory.update', p_gene, p_key, p_category, v_size, NULL);
    UPDATE rotifer.entries SET
      category = p_category, value = p_value, size = v_size, last_accessed_by = p_gene,
      updated_at = v_time, seq = a.last_seq + 1,
      read_scope = v_read, write_scope = v_write, share_policy = v_share,
      ret_set = v_ret_set, ret_days = v_ret_days, ret_auto_delete = v_ret_auto, ret_anonymization = v_ret_anon,
      expires_at = rotifer.expiry(v_time, v_ret_set, v_ret_days, a.max_retention_days)
    WHERE agent_id = p_agent AND key = p_key
    RETURNING * INTO e;
  ELSE
    PERFORM rotifer.audit_row(p_agent, v_now, v_tx, v_lines, 'memory.create', p_gene, p_key, p_category, v_size, NULL);
    INSERT INTO rotifer.entries VALUES (
      p_agent, p_key, rotifer.entry_id(p_agent, p_key), p_category, p_value, v_size,
      p_gene, p_domain, p_gene, v_time, v_time, a.last_seq + 1,
      v_read, v_write, v_share, v_ret_set, v_ret_days, v_ret_auto, v_ret_anon,
      rotifer.expiry(v_time, v_ret_set, v_ret_days, a.max_retention_days))
    RETURNING * INTO e;
  END IF;
  IF p_attempt IS NOT NULL THEN
    INSERT INTO rotifer.attempts (attempt_id, agent_id, at_ms, result)
    VALUES (p_attempt, p_agent, v_now, to_jsonb(e) - 'value' - 'agent_id');
  END IF;
  PERFORM rotifer.finish(p_agent, v_now, v_tx, v_lines, v_after, a.last_seq + 1, v_time);
  RETURN rotifer.answer(e);
END $$;
