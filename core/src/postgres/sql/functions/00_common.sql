-- What every call function shares: the agent's lock, the clock, expiry, access, the audit.
-- None of these is executable by a deployment's role: only the call functions, which run as
-- rotifer_owner, use them.
--
-- The pure helpers below (one expression each, LANGUAGE sql, IMMUTABLE) carry no `SET
-- search_path`: a function with a SET clause is never inlined, and a SQL function that is not
-- inlined is planned again at every call (tens of microseconds, several times per call). Inlined,
-- they are planned within their caller, whose search_path is fixed; the functions they call are
-- qualified with pg_catalog.

-- R-ENT: lowercase hex SHA-256 of UTF8(agentId) ‖ 0x00 ‖ UTF8(key). STABLE, as convert_to is:
-- a function declared less volatile than its body is not inlined.
CREATE OR REPLACE FUNCTION rotifer.entry_id(p_agent text, p_key text) RETURNS text
LANGUAGE sql STABLE STRICT AS $$
  SELECT pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(p_agent, 'UTF8') || '\x00'::bytea || pg_catalog.convert_to(p_key, 'UTF8')), 'hex')
$$;

-- R-BIND-5: the server's clock in ms, read when called (clock_timestamp, not the transaction's
-- start); a test clock only for a role set up to allow one.
CREATE OR REPLACE FUNCTION rotifer.clock_ms(p_now bigint) RETURNS bigint
LANGUAGE plpgsql SET search_path = pg_catalog, rotifer, pg_temp AS $$
BEGIN
  IF p_now IS NULL THEN
    RETURN floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM rotifer.roles r WHERE r.role_name = session_user AND r.test_clock) THEN
    RAISE EXCEPTION 'role % may not give its own clock: only a role set up for tests may', session_user
      USING ERRCODE = 'RT001';
  END IF;
  IF p_now NOT BETWEEN 0 AND 253402300799999 THEN
    RAISE EXCEPTION 'a test clock must be between 1970 and 9999' USING ERRCODE = 'RT002';
  END IF;
  RETURN p_now;
END $$;

-- The agent's row, locked for the call (R-BIND-5: every change of an agent is serialised here, on
-- every host). A gene's call creates a missing memory with the defaults (R-HOST-1); an agent of
-- another role is not visible, and is refused.
--
-- An agent a move has fenced (R-MIG-4) is refused (RT010): its memory is elsewhere.
CREATE OR REPLACE FUNCTION rotifer.lock_agent(p_agent text, p_create boolean) RETURNS rotifer.agents
LANGUAGE plpgsql SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  v rotifer.agents;
BEGIN
  v := rotifer.lock_agent_any(p_agent, p_create);
  IF v.fence IS NOT NULL THEN
    IF v.fence->>'state' = 'moved' THEN
      RAISE EXCEPTION 'the memory of agent "%" moved to % (rotifer agent migrate, %); this copy is kept but no longer used: open the memory again, without naming this binding',
        p_agent, v.fence->>'binding', v.fence->>'at' USING ERRCODE = 'RT010';
    END IF;
    RAISE EXCEPTION 'this is a copy of agent "%"''s memory that a move from % (rotifer agent migrate, %) brought and did not finish; the memory is still there: open it without naming this binding, or run the migrate again',
      p_agent, v.fence->>'binding', v.fence->>'at' USING ERRCODE = 'RT010';
  END IF;
  RETURN v;
END $$;

-- `lock_agent`, fenced or not: for deleting an agent and for the move's own functions.
CREATE OR REPLACE FUNCTION rotifer.lock_agent_any(p_agent text, p_create boolean) RETURNS rotifer.agents
LANGUAGE plpgsql SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  v rotifer.agents;
BEGIN
  IF p_agent IS NULL OR p_agent !~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$' THEN
    RAISE EXCEPTION 'agentId is not valid' USING ERRCODE = 'RT003';
  END IF;
  SELECT * INTO v FROM rotifer.agents WHERE agent_id = p_agent FOR UPDATE;
  IF FOUND OR NOT p_create THEN
    RETURN v;
  END IF;
  INSERT INTO rotifer.agents (agent_id, quota, anonymization_supported, max_retention_days, created_ms)
  VALUES (p_agent, 10485760, false, NULL, rotifer.clock_ms(NULL))
  ON CONFLICT (agent_id) DO NOTHING;
  SELECT * INTO v FROM rotifer.agents WHERE agent_id = p_agent FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'agent % belongs to another deployment', p_agent USING ERRCODE = 'RT004';
  END IF;
  RETURN v;
END $$;

-- R-RET-1/2: when an entry expires; NULL never.
CREATE OR REPLACE FUNCTION rotifer.expiry(p_updated bigint, p_ret_set boolean, p_ret_days integer, p_agent_days integer)
RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN p_ret_set THEN p_updated + p_ret_days::bigint * 86400000
    ELSE p_updated + p_agent_days::bigint * 86400000
  END
$$;

-- R-ACC table, R-ACC-6. Never NULL: a creator with no domain (NULL) admits no other gene by
-- domain, and `IF NOT admits(…)` must not read a NULL as "not refused".
CREATE OR REPLACE FUNCTION rotifer.admits(p_scope text, p_created_by text, p_creator_domain text, p_gene text, p_domain text)
RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(CASE p_scope
    WHEN 'CREATOR_GENE_ONLY' THEN p_gene = p_created_by
    WHEN 'SAME_DOMAIN' THEN p_gene = p_created_by OR (p_domain IS NOT NULL AND p_creator_domain IS NOT NULL AND p_domain = p_creator_domain)
    WHEN 'ALL_GENES' THEN true
    ELSE false
  END, false)
$$;

CREATE OR REPLACE FUNCTION rotifer.denial_reason(p_op text, p_which text, p_scope text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT p_which || ' ' || p_scope || ' lets ' || CASE p_scope
    WHEN 'CREATOR_GENE_ONLY' THEN 'only the gene that created it'
    WHEN 'SAME_DOMAIN' THEN 'only its creator and genes of the creator''s domain'
    WHEN 'ALL_GENES' THEN 'every gene'
    ELSE 'no gene in this version (DEPLOYER_CONFIGURED is not configurable yet)'
  END || ' ' || p_op || ' this entry'
$$;

-- One audit row (R-BIND-3, line shapes of R-AUD-3), in the transaction of the change.
CREATE OR REPLACE FUNCTION rotifer.audit_row(
  p_agent text, p_ts bigint, p_tx bigint, p_line integer, p_action text, p_actor text,
  p_key text, p_category text, p_size bigint, p_facts jsonb
) RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, rotifer, pg_temp AS $$
BEGIN
  -- plpgsql, not sql: its statement's plan is kept for the session.
  INSERT INTO rotifer.audit (agent_id, ts, tx, tx_line, action, actor, key, entry_id, category, size, facts)
  VALUES (p_agent, p_ts, p_tx, p_line, p_action, p_actor, p_key,
          CASE WHEN p_key IS NULL THEN NULL ELSE rotifer.entry_id(p_agent, p_key) END,
          p_category, p_size, p_facts);
END $$;

-- R-RET-4: purges what has expired at `p_now`, each purge audited as a change of transaction
-- `p_tx` from line `p_line`; answers the lines written and the bytes freed.
CREATE OR REPLACE FUNCTION rotifer.purge(p_agent text, p_now bigint, p_tx bigint, p_line integer, OUT lines integer, OUT freed bigint)
LANGUAGE plpgsql SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  r record;
BEGIN
  lines := 0;
  freed := 0;
  -- Nothing expired, as at most calls: one probe of the expiry index. (A scan of a range the
  -- call's time bounds is planned again at every call, as its generic plan never looks cheaper.)
  IF coalesce((SELECT min(expires_at) FROM rotifer.entries WHERE agent_id = p_agent) > p_now, true) THEN
    RETURN;
  END IF;
  -- Oldest expiry first, ties in write order (R-RET-4): the audit's order, as on the file.
  FOR r IN
    SELECT key, category, size FROM rotifer.entries
    WHERE agent_id = p_agent AND expires_at IS NOT NULL AND expires_at <= p_now
    ORDER BY expires_at, seq
  LOOP
    DELETE FROM rotifer.entries WHERE agent_id = p_agent AND key = r.key;
    lines := lines + 1;
    freed := freed + r.size;
    PERFORM rotifer.audit_row(p_agent, p_now, p_tx, p_line + lines, 'memory.expire', NULL, r.key, r.category, r.size, NULL);
  END LOOP;
END $$;

-- `p_tx` if a call that also wrote refusal rows recorded `p_changes` change rows, else NULL:
-- a transaction number counts changes only, so a refusal leaves no gap in them.
CREATE OR REPLACE FUNCTION rotifer.tx_if(p_changes integer, p_tx bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN p_changes > 0 THEN p_tx END
$$;

-- Ends a call: `p_lines` audit rows written, of which those of transaction `p_tx` (NULL: none)
-- were changes; the agent's counters, and the audit's bound (R-BIND-3: oldest rows trimmed past
-- the agent's maximum, the trim itself recorded).
CREATE OR REPLACE FUNCTION rotifer.finish(
  p_agent text, p_now bigint, p_tx bigint, p_lines integer, p_used bigint, p_seq bigint, p_last_ms bigint
) RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  v rotifer.agents;
  v_excess bigint;
BEGIN
  UPDATE rotifer.agents SET
    used_bytes = p_used,
    last_seq = p_seq,
    last_ms = greatest(last_ms, p_last_ms),
    last_tx = CASE WHEN p_lines > 0 AND p_tx IS NOT NULL THEN p_tx ELSE last_tx END,
    audit_rows = audit_rows + p_lines
  WHERE agent_id = p_agent
  RETURNING * INTO v;
  v_excess := v.audit_rows - v.audit_max_rows;
  IF v_excess > 0 THEN
    -- A tenth more than the excess, so that a trim is not paid on every call.
    v_excess := v_excess + v.audit_max_rows / 10;
    DELETE FROM rotifer.audit WHERE id IN (
      SELECT id FROM rotifer.audit WHERE agent_id = p_agent ORDER BY id LIMIT v_excess
    );
    GET DIAGNOSTICS v_excess = ROW_COUNT;
    PERFORM rotifer.audit_row(p_agent, p_now, NULL, NULL, 'memory.audit_trim', NULL, NULL, NULL, NULL,
      jsonb_build_object('trimmed', v_excess, 'max', v.audit_max_rows));
    UPDATE rotifer.agents SET audit_rows = audit_rows - v_excess + 1 WHERE agent_id = p_agent;
  END IF;
  -- Attempt records answer a client that lost a commit's acknowledgement; a day is ample. They
  -- are looked at every 64th change, and pruned when the oldest is an hour past that: about once
  -- an hour, not at every call (the delete's range is planned again each time it runs).
  IF v.last_tx % 64 = 0 AND (SELECT min(at_ms) FROM rotifer.attempts WHERE agent_id = p_agent) < p_now - 90000000 THEN
    DELETE FROM rotifer.attempts WHERE agent_id = p_agent AND at_ms < p_now - 86400000;
  END IF;
END $$;

-- An entry row as a call's answer.
CREATE OR REPLACE FUNCTION rotifer.answer(e rotifer.entries) RETURNS rotifer.call_result
LANGUAGE sql IMMUTABLE AS $$
  SELECT ROW('ok', NULL, NULL, NULL, e.entry_id, e.category, e.key, e.value, e.created_by, e.last_accessed_by,
             e.created_at, e.updated_at, e.read_scope, e.write_scope, e.share_policy,
             e.ret_set, e.ret_days, e.ret_auto_delete, e.ret_anonymization)::rotifer.call_result
$$;

CREATE OR REPLACE FUNCTION rotifer.refusal(p_code text, p_reason text, p_facts jsonb) RETURNS rotifer.call_result
LANGUAGE sql IMMUTABLE AS $$
  SELECT ROW('refused', p_code, p_reason, p_facts, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
             NULL, NULL, NULL, NULL, NULL, NULL, NULL)::rotifer.call_result
$$;

-- Is `p_gene` a valid v2 id, and `p_domain` a valid domain or NULL? (R-ACC-4, R-ACC-6)
CREATE OR REPLACE FUNCTION rotifer.valid_gene(p_gene text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT p_gene IS NOT NULL AND p_gene ~ '^v2:[0-9a-f]{64}$'
$$;

-- Identity first (R-ACC-4): a call with no valid v2 id is denied before anything else, its
-- denial recorded; answers the refusal.
CREATE OR REPLACE FUNCTION rotifer.deny_unidentified(p_agent text, p_now bigint, p_key text, p_op text, a rotifer.agents)
RETURNS rotifer.call_result LANGUAGE plpgsql SET search_path = pg_catalog, rotifer, pg_temp AS $$
BEGIN
  PERFORM rotifer.audit_row(p_agent, p_now, NULL, NULL, 'memory.access_denied', NULL, p_key, NULL, NULL,
    jsonb_build_object('op', p_op, 'code', 'MEMORY_ACCESS_DENIED', 'reason', 'no valid v2 id'));
  PERFORM rotifer.finish(p_agent, p_now, NULL, 1, a.used_bytes, a.last_seq, 0);
  RETURN rotifer.refusal('MEMORY_ACCESS_DENIED', 'no valid v2 id', NULL);
END $$;

-- An entry brought in whole by an import or a restore (`p_what`, for messages; `p_i`, its place),
-- as a JSON object of the entries table's columns (`last_accessed_by` and `seq` included): refused
-- unless the agent's data policy allows it (R-POL-1/2), its times are not a day after `p_now`, it has
-- not expired by the agent's rules; then stored, replacing the entry of its key if there is one.
-- The client checked all of it; a role calling the functions directly meets the same rules.
CREATE OR REPLACE FUNCTION rotifer.put_brought_entry(p_what text, p_i integer, j jsonb, v bytea, a rotifer.agents, p_now bigint)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  v_key text := j->>'key';
  v_ret_set boolean := (j->>'ret_set')::boolean;
  v_ret_days integer := (j->>'ret_days')::integer;
  v_updated bigint := (j->>'updated_at')::bigint;
BEGIN
  IF (j->>'share_policy') IN ('ANONYMIZED_SHARE', 'KNOWLEDGE_GENE') AND NOT a.anonymization_supported
     OR (a.max_retention_days IS NOT NULL AND v_ret_set AND (v_ret_days IS NULL OR v_ret_days > a.max_retention_days)) THEN
    RAISE EXCEPTION 'entry % of the % breaks the agent''s data policy', p_i, p_what USING ERRCODE = 'RT001';
  END IF;
  -- A day of slack, as the client allows (time::check_not_future): two hosts' clocks differ.
  IF (j->>'created_at')::bigint > p_now + 86400000 OR v_updated > p_now + 86400000 THEN
    RAISE EXCEPTION 'entry % of the % is more than a day in the future', p_i, p_what USING ERRCODE = 'RT002';
  END IF;
  IF rotifer.expiry(v_updated, v_ret_set, v_ret_days, a.max_retention_days) <= p_now THEN
    RAISE EXCEPTION 'entry % of the % has expired', p_i, p_what USING ERRCODE = 'RT002';
  END IF;
  INSERT INTO rotifer.entries VALUES (
    a.agent_id, v_key, rotifer.entry_id(a.agent_id, v_key), j->>'category', v, octet_length(v_key) + octet_length(v),
    j->>'created_by', j->>'creator_domain', j->>'last_accessed_by', (j->>'created_at')::bigint, v_updated, (j->>'seq')::bigint,
    j->>'read_scope', j->>'write_scope', j->>'share_policy', v_ret_set, v_ret_days,
    coalesce((j->>'ret_auto_delete')::boolean, false), coalesce((j->>'ret_anonymization')::boolean, false),
    rotifer.expiry(v_updated, v_ret_set, v_ret_days, a.max_retention_days))
  ON CONFLICT (agent_id, key) DO UPDATE SET
    entry_id = EXCLUDED.entry_id, category = EXCLUDED.category, value = EXCLUDED.value, size = EXCLUDED.size,
    created_by = EXCLUDED.created_by, creator_domain = EXCLUDED.creator_domain, last_accessed_by = EXCLUDED.last_accessed_by,
    created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at, seq = EXCLUDED.seq,
    read_scope = EXCLUDED.read_scope, write_scope = EXCLUDED.write_scope, share_policy = EXCLUDED.share_policy,
    ret_set = EXCLUDED.ret_set, ret_days = EXCLUDED.ret_days, ret_auto_delete = EXCLUDED.ret_auto_delete,
    ret_anonymization = EXCLUDED.ret_anonymization, expires_at = EXCLUDED.expires_at;
END $$;
