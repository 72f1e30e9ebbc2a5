-- createAgentMemory and ensureAgentMemory (R-HOST-1, R-POL-3): the agent's row with a quota and
-- a data policy. A missing agent is created with them (owned by the calling role); an existing
-- one is reconfigured only with `p_replace` (createAgentMemory: its entries that follow the
-- agent's retention get their new expiry), else keeps its own (ensureAgentMemory: a deleted
-- memory comes back with the record's limits, and no limit is ever lifted). Answers whether the
-- agent was created. An agent of another deployment is refused.
CREATE OR REPLACE FUNCTION rotifer.agent_configure(
  p_agent text, p_quota bigint, p_anonymization boolean, p_max_days integer, p_replace boolean
) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  a rotifer.agents;
  v_created boolean := false;
BEGIN
  IF p_agent IS NULL OR p_agent !~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$' THEN
    RAISE EXCEPTION 'agentId is not valid' USING ERRCODE = 'RT003';
  END IF;
  IF p_quota IS NULL OR p_quota NOT BETWEEN 1 AND 1099511627776 OR p_anonymization IS NULL
     OR (p_max_days IS NOT NULL AND p_max_days < 1) OR p_replace IS NULL THEN
    RAISE EXCEPTION 'the quota or the data policy is not valid' USING ERRCODE = 'RT002';
  END IF;
  a := rotifer.lock_agent(p_agent, false);
  IF a.agent_id IS NULL THEN
    INSERT INTO rotifer.agents (agent_id, quota, anonymization_supported, max_retention_days, created_ms)
    VALUES (p_agent, p_quota, p_anonymization, p_max_days, rotifer.clock_ms(NULL))
    ON CONFLICT (agent_id) DO NOTHING;
    GET DIAGNOSTICS v_created = ROW_COUNT;
    a := rotifer.lock_agent(p_agent, false);
    IF a.agent_id IS NULL THEN
      RAISE EXCEPTION 'agent % belongs to another deployment', p_agent USING ERRCODE = 'RT004';
    END IF;
    IF v_created THEN
      RETURN true;
    END IF;
  END IF;
  IF p_replace THEN
    UPDATE rotifer.agents SET quota = p_quota, anonymization_supported = p_anonymization, max_retention_days = p_max_days
    WHERE agent_id = p_agent;
    UPDATE rotifer.entries e SET expires_at = rotifer.expiry(e.updated_at, false, NULL, p_max_days)
    WHERE e.agent_id = p_agent AND NOT e.ret_set;
  END IF;
  RETURN false;
END $$;
