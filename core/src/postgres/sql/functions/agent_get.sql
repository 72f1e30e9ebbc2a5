-- getAgentMemory: the live entry with this key, whatever its access policy, value included;
-- no row if there is none. Reads only.
CREATE OR REPLACE FUNCTION rotifer.agent_get(p_agent text, p_key text, p_now bigint)
RETURNS SETOF rotifer.call_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  v_now bigint;
BEGIN
  IF p_agent IS NULL OR p_agent !~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$' THEN
    RAISE EXCEPTION 'agentId is not valid' USING ERRCODE = 'RT003';
  END IF;
  IF p_key IS NULL OR octet_length(p_key) NOT BETWEEN 1 AND 1024 THEN
    RAISE EXCEPTION 'the key is not valid' USING ERRCODE = 'RT002';
  END IF;
  v_now := rotifer.clock_ms(p_now);
  RETURN QUERY
    SELECT (rotifer.answer(e)).* FROM rotifer.entries e
    WHERE e.agent_id = p_agent AND e.key = p_key AND (e.expires_at IS NULL OR e.expires_at > v_now);
END $$;
