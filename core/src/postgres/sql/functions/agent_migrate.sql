-- `rotifer agent migrate` (R-MIG-4) on the server. The move's client holds the source agent's
-- lock in one transaction from `migrate_hold` (its bundle read in the same snapshot) to the
-- `migrate_mark` that fences it `moved`, and commits: calls of other hosts wait meanwhile, as for
-- a busy agent, then find the fence (`lock_agent` refuses, RT010). On the target, one
-- transaction: `migrate_arrive`, the import (`memory_import`), `migrate_mark` with `arriving`;
-- `migrate_arrived` clears that once the agent's record names this binding.

-- The source's hold: the agent's lock (a fenced agent is refused), its limits, and the time the
-- bundle is read at.
CREATE OR REPLACE FUNCTION rotifer.migrate_hold(
  p_agent text, p_now bigint,
  OUT now_ms bigint, OUT quota bigint, OUT anonymization_supported boolean, OUT max_retention_days integer, OUT used_bytes bigint
) LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  a rotifer.agents;
BEGIN
  a := rotifer.lock_agent(p_agent, false);
  IF a.agent_id IS NULL THEN
    RAISE EXCEPTION 'agent "%" has no memory on this server: there is nothing to move', p_agent USING ERRCODE = 'RT005';
  END IF;
  now_ms := greatest(rotifer.clock_ms(p_now), a.last_ms);
  quota := a.quota;
  anonymization_supported := a.anonymization_supported;
  max_retention_days := a.max_retention_days;
  used_bytes := a.used_bytes;
END $$;

-- The target's side before the import: the agent's lock, the agent made with the source's
-- limits if it has no memory here. A copy an earlier move left (fenced `moved` or `arriving`) is
-- replaced whole: its entries go, it takes the source's limits, and its fence is lifted for the
-- import that follows in the same transaction. An agent in use here keeps its entries and its
-- limits (the import's `onConflict` decides). Answers how many entries the left copy had.
CREATE OR REPLACE FUNCTION rotifer.migrate_arrive(p_agent text, p_quota bigint, p_anonymization boolean, p_max_days integer)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  a rotifer.agents;
  v_left bigint := 0;
BEGIN
  IF p_quota IS NULL OR p_quota NOT BETWEEN 1 AND 1099511627776 OR p_anonymization IS NULL
     OR (p_max_days IS NOT NULL AND p_max_days < 1) THEN
    RAISE EXCEPTION 'the quota or the data policy is not valid' USING ERRCODE = 'RT002';
  END IF;
  a := rotifer.lock_agent_any(p_agent, false);
  IF a.agent_id IS NULL THEN
    INSERT INTO rotifer.agents (agent_id, quota, anonymization_supported, max_retention_days, created_ms)
    VALUES (p_agent, p_quota, p_anonymization, p_max_days, rotifer.clock_ms(NULL))
    ON CONFLICT (agent_id) DO NOTHING;
    a := rotifer.lock_agent_any(p_agent, false);
    IF a.agent_id IS NULL THEN
      RAISE EXCEPTION 'agent % belongs to another deployment', p_agent USING ERRCODE = 'RT004';
    END IF;
    RETURN 0;
  END IF;
  IF a.fence IS NOT NULL THEN
    DELETE FROM rotifer.entries WHERE agent_id = p_agent;
    GET DIAGNOSTICS v_left = ROW_COUNT;
    UPDATE rotifer.agents SET fence = NULL, used_bytes = 0, quota = p_quota,
      anonymization_supported = p_anonymization, max_retention_days = p_max_days
    WHERE agent_id = p_agent;
  END IF;
  RETURN v_left;
END $$;

-- A move's mark and its audit row (`memory.migrate`, actor "deployer", the bytes held, the
-- reason), as one change of the agent.
CREATE OR REPLACE FUNCTION rotifer.migrate_mark(p_agent text, p_fence jsonb, p_reason text, p_now bigint)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  a rotifer.agents;
  v_now bigint;
BEGIN
  IF p_fence IS NULL OR p_reason IS NULL OR octet_length(p_reason) > 4096 THEN
    RAISE EXCEPTION 'a move''s mark and its reason are required' USING ERRCODE = 'RT002';
  END IF;
  a := rotifer.lock_agent_any(p_agent, false);
  IF a.agent_id IS NULL THEN
    RAISE EXCEPTION 'agent "%" has no memory on this server', p_agent USING ERRCODE = 'RT005';
  END IF;
  v_now := rotifer.clock_ms(p_now);
  UPDATE rotifer.agents SET fence = p_fence WHERE agent_id = p_agent;
  PERFORM rotifer.audit_row(p_agent, v_now, a.last_tx + 1, 1, 'memory.migrate', 'deployer', NULL, NULL, a.used_bytes,
    jsonb_build_object('reason', p_reason));
  PERFORM rotifer.finish(p_agent, v_now, a.last_tx + 1, 1, a.used_bytes, a.last_seq + 1, 0);
END $$;

-- The target named by the agent's record: the `arriving` mark of move `p_move` lifted. Answers
-- whether there was one.
CREATE OR REPLACE FUNCTION rotifer.migrate_arrived(p_agent text, p_move text)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  a rotifer.agents;
BEGIN
  a := rotifer.lock_agent_any(p_agent, false);
  IF a.agent_id IS NULL OR a.fence IS NULL OR a.fence->>'state' <> 'arriving' OR a.fence->>'move' IS DISTINCT FROM p_move THEN
    RETURN false;
  END IF;
  UPDATE rotifer.agents SET fence = NULL WHERE agent_id = p_agent;
  RETURN true;
END $$;
