-- inspectAgentMemory: the agent's quota and data policy, and per category the live entries,
-- their bytes and the nearest expiry; no row if the agent has no memory. Reads only.
CREATE OR REPLACE FUNCTION rotifer.agent_usage(p_agent text, p_now bigint)
RETURNS TABLE (quota bigint, anonymization_supported boolean, max_retention_days integer,
               category text, entries bigint, bytes bigint, next_expiry bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  v_now bigint;
BEGIN
  IF p_agent IS NULL OR p_agent !~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$' THEN
    RAISE EXCEPTION 'agentId is not valid' USING ERRCODE = 'RT003';
  END IF;
  v_now := rotifer.clock_ms(p_now);
  -- One statement, one snapshot: the agent's row and its totals together.
  RETURN QUERY
    SELECT a.quota, a.anonymization_supported, a.max_retention_days, c.category,
           count(e.key)::bigint, coalesce(sum(e.size), 0)::bigint, min(e.expires_at)
    FROM rotifer.agents a
    CROSS JOIN (VALUES ('PREFERENCE'), ('PATTERN'), ('CONTEXT'), ('CACHE')) AS c (category)
    LEFT JOIN rotifer.entries e
      ON e.agent_id = a.agent_id AND e.category = c.category
     AND (e.expires_at IS NULL OR e.expires_at > v_now)
    WHERE a.agent_id = p_agent
    GROUP BY a.quota, a.anonymization_supported, a.max_retention_days, c.category;
END $$;
