-- listAgentMemoryPage: the live entries of a category and/or key prefix, by key, after the key
-- `p_after`, at most `p_limit` (the client asks for one more than it shows, to know there are
-- more). With `p_totals`, first a row of tag 1: the count and bytes of every matching entry and
-- the quota, from the same snapshot as the page (rows of tag 2). What has expired is purged
-- first, under the agent's lock, only when there is something to purge. An agent with no
-- memory has no rows, and its totals a quota of 0.
CREATE OR REPLACE FUNCTION rotifer.memory_list(
  p_agent text, p_category text, p_prefix text, p_after text, p_limit integer, p_totals boolean, p_now bigint
) RETURNS TABLE (tag integer, key text, category text, size bigint, created_by text, updated_at bigint,
                 total_entries bigint, total_bytes bigint, quota bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  a rotifer.agents;
  v_now bigint;
  v_purged record;
  v_end text;
BEGIN
  IF p_agent IS NULL OR p_agent !~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$' THEN
    RAISE EXCEPTION 'agentId is not valid' USING ERRCODE = 'RT003';
  END IF;
  IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND 100001
     OR (p_category IS NOT NULL AND p_category NOT IN ('CACHE', 'PATTERN', 'CONTEXT', 'PREFERENCE')) THEN
    RAISE EXCEPTION 'the category or the page size is not valid' USING ERRCODE = 'RT002';
  END IF;
  v_now := rotifer.clock_ms(p_now);
  SELECT * INTO a FROM rotifer.agents ag WHERE ag.agent_id = p_agent;
  IF NOT FOUND THEN
    IF p_totals THEN
      RETURN QUERY SELECT 1, NULL::text, NULL::text, NULL::bigint, NULL::text, NULL::bigint, 0::bigint, 0::bigint, 0::bigint;
    END IF;
    RETURN;
  END IF;
  IF EXISTS (SELECT 1 FROM rotifer.entries e WHERE e.agent_id = p_agent AND e.expires_at <= v_now) THEN
    a := rotifer.lock_agent(p_agent, false);
    v_purged := rotifer.purge(p_agent, v_now, a.last_tx + 1, 0);
    PERFORM rotifer.finish(p_agent, v_now, a.last_tx + 1, v_purged.lines, a.used_bytes - v_purged.freed, a.last_seq, 0);
  END IF;
  v_end := CASE WHEN p_prefix IS NULL OR p_prefix = '' THEN NULL ELSE rotifer.prefix_end(p_prefix) END;
  RETURN QUERY
    WITH matching AS (
      SELECT e.key, e.category, e.size, e.created_by, e.updated_at FROM rotifer.entries e
      WHERE e.agent_id = p_agent
        AND (p_category IS NULL OR e.category = p_category)
        AND (p_prefix IS NULL OR p_prefix = '' OR (e.key >= p_prefix AND (v_end IS NULL OR e.key < v_end)))
        AND (e.expires_at IS NULL OR e.expires_at > v_now)
    )
    SELECT 1, NULL::text, NULL::text, NULL::bigint, NULL::text, NULL::bigint,
           count(*)::bigint, coalesce(sum(m.size), 0)::bigint,
           (SELECT ag.quota FROM rotifer.agents ag WHERE ag.agent_id = p_agent)
    FROM matching m HAVING p_totals
    UNION ALL
    SELECT * FROM (
      SELECT 2, m.key, m.category, m.size, m.created_by, m.updated_at, NULL::bigint, NULL::bigint, NULL::bigint
      FROM matching m WHERE p_after IS NULL OR m.key > p_after
      ORDER BY m.key LIMIT p_limit
    ) page;
END $$;
