-- After a changing call lost its connection (R-BIND-6): did attempt `p_attempt` commit? If it
-- did, its record answers (`committed` true, `result` the entry as stored, null for a delete).
-- If it did not, a tombstone takes its id, so the attempt can never commit later: a call still in
-- flight (held in the network, delivered after the client gave up) fails on the tombstone's key
-- and rolls back whole. Row-level security keeps it to the role's own agents.
CREATE OR REPLACE FUNCTION rotifer.attempt_settle(p_agent text, p_attempt text) RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  v_result jsonb;
  a rotifer.agents;
BEGIN
  IF p_attempt IS NULL OR p_attempt !~ '^[0-9a-f]{32}$' THEN
    RAISE EXCEPTION 'an attempt id is 32 hex digits' USING ERRCODE = 'RT002';
  END IF;
  -- The agent's lock first: an attempt still running holds it (or is inserting the agent's row),
  -- so this waits for it to end (as long as lock_timeout allows) and then sees what it did. Inserting first would make the two
  -- wait for each other (the tombstone's key against the attempt's lock): a deadlock.
  -- Made if missing, as the attempt itself would: an agent's first change creates its row, and
  -- the creation in flight is waited for the same way.
  a := rotifer.lock_agent(p_agent, true);
  INSERT INTO rotifer.attempts (attempt_id, agent_id, at_ms, result)
  VALUES (p_attempt, p_agent, (extract(epoch FROM clock_timestamp()) * 1000)::bigint, '{"abandoned": true}')
  ON CONFLICT (attempt_id) DO NOTHING;
  IF FOUND THEN
    RETURN jsonb_build_object('committed', false);
  END IF;
  SELECT result INTO v_result FROM rotifer.attempts WHERE attempt_id = p_attempt AND agent_id = p_agent;
  IF NOT FOUND OR v_result = '{"abandoned": true}'::jsonb THEN
    RETURN jsonb_build_object('committed', false);
  END IF;
  RETURN jsonb_build_object('committed', true, 'result', v_result);
END $$;
