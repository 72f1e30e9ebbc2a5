-- queryMemory (R-API-3, R-LIM-3/4): the purge first (under the agent's lock, only when something
-- has expired), then one statement, one snapshot: the readable matching entries, most recently
-- updated first, at most p_limit; more than 4 MiB in all is refused, never cut short.
-- The key prefix is a range in code point order (the key column compares as "C"): no pattern,
-- so no character of a prefix is special.

-- The smallest text after every text that starts with p_prefix; NULL: there is none.
CREATE OR REPLACE FUNCTION rotifer.prefix_end(p_prefix text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v text := p_prefix;
  c integer;
BEGIN
  WHILE length(v) > 0 LOOP
    c := ascii(right(v, 1));
    v := left(v, -1);
    IF c < 1114111 THEN
      c := c + 1;
      IF c BETWEEN 55296 AND 57343 THEN c := 57344; END IF; -- no surrogates in text
      RETURN v || chr(c);
    END IF;
  END LOOP;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION rotifer.memory_query(
  p_agent text, p_gene text, p_domain text, p_category text, p_prefix text,
  p_since bigint, p_until bigint, p_limit integer, p_now bigint
) RETURNS SETOF rotifer.call_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, rotifer, pg_temp AS $$
DECLARE
  a rotifer.agents;
  v_now bigint;
  v_purged record;
  v_end text;
  r record;
BEGIN
  -- A query changes nothing unless something has expired (the purge comes first) or the caller
  -- must be denied (the denial is recorded): only then does it take the agent's lock.
  v_now := rotifer.clock_ms(p_now);
  IF NOT (rotifer.valid_gene(p_gene)
          AND EXISTS (SELECT 1 FROM rotifer.agents WHERE agent_id = p_agent AND fence IS NULL)
          AND coalesce((SELECT min(expires_at) FROM rotifer.entries WHERE agent_id = p_agent) > v_now, true)) THEN
    a := rotifer.lock_agent(p_agent, true);
    v_now := rotifer.clock_ms(p_now);
    IF NOT rotifer.valid_gene(p_gene) THEN
      RETURN NEXT rotifer.deny_unidentified(p_agent, v_now, NULL, 'query', a);
      RETURN;
    END IF;
    IF coalesce((SELECT min(expires_at) FROM rotifer.entries WHERE agent_id = p_agent) <= v_now, false) THEN
      v_purged := rotifer.purge(p_agent, v_now, a.last_tx + 1, 0);
      PERFORM rotifer.finish(p_agent, v_now, a.last_tx + 1, v_purged.lines, a.used_bytes - v_purged.freed, a.last_seq, 0);
    END IF;
  END IF;
  IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND 1000
     OR (p_category IS NOT NULL AND p_category NOT IN ('CACHE', 'PATTERN', 'CONTEXT', 'PREFERENCE'))
     OR (p_domain IS NOT NULL AND p_domain !~ '^[a-z0-9]+(\.[a-z0-9]+)*$') THEN
    RETURN NEXT rotifer.refusal('MEMORY_INVALID_INPUT', 'the filter or domain is not valid', NULL);
    RETURN;
  END IF;
  v_end := CASE WHEN p_prefix IS NULL OR p_prefix = '' THEN NULL ELSE rotifer.prefix_end(p_prefix) END;
  -- The total is the window's: known at the first row, before any row is answered.
  FOR r IN
    SELECT rotifer.answer(e) AS row, sum(e.size) OVER () AS total FROM (
      SELECT * FROM rotifer.entries e
      WHERE e.agent_id = p_agent
        AND (p_category IS NULL OR e.category = p_category)
        AND (p_prefix IS NULL OR p_prefix = '' OR (e.key >= p_prefix AND (v_end IS NULL OR e.key < v_end)))
        AND (p_since IS NULL OR e.updated_at >= p_since)
        AND (p_until IS NULL OR e.updated_at < p_until)
        AND rotifer.admits(e.read_scope, e.created_by, e.creator_domain, p_gene, p_domain)
      ORDER BY e.updated_at DESC, e.seq DESC
      LIMIT p_limit
    ) e
    ORDER BY e.updated_at DESC, e.seq DESC
  LOOP
    IF r.total > 4194304 THEN
      RETURN NEXT rotifer.refusal('MEMORY_INVALID_INPUT', NULL, jsonb_build_object('total', r.total, 'limit', p_limit));
      RETURN;
    END IF;
    RETURN NEXT r.row;
  END LOOP;
END $$;
