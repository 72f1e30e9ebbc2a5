-- deleteAgentDatabase (`rotifer agent delete`): the agent as a whole, its entries, audit rows
-- and attempt records with it, under its lock (a call in progress finishes first; the next one
-- of a gene creates an empty memory, as after the file's deletion). Answers how many entries
-- it had, NULL if the role has no such agent.
CREATE OR REPLACE FUNCTION rotifer.memory_drop_agent(p_agent text) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  a rotifer.agents;
  v_entries bigint;
BEGIN
  a := rotifer.lock_agent_any(p_agent, false); -- a moved agent's copy is deleted too
  IF a.agent_id IS NULL THEN
    RETURN NULL;
  END IF;
  SELECT count(*) INTO v_entries FROM rotifer.entries e WHERE e.agent_id = p_agent;
  DELETE FROM rotifer.agents WHERE agent_id = p_agent;
  RETURN v_entries;
END $$;
