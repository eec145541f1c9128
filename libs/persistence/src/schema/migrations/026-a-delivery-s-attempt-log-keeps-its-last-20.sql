-- a delivery's attempt log keeps its last 20 attempts
-- Each replay or retry added an entry (~1 KiB with the reply) to a log rewritten whole on every attempt: a
-- portal link replaying in a loop grew one row without bound. `attempts` still counts every attempt; the log
-- keeps the newest 20 (the whole retry schedule, and then some). The one place the bound is written: every
-- statement that adds to a log calls this.

      CREATE FUNCTION append_attempts(log jsonb, more jsonb) RETURNS jsonb
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
        SELECT CASE WHEN jsonb_array_length(log || more) <= 20 THEN log || more
               ELSE (SELECT jsonb_agg(e ORDER BY i) FROM jsonb_array_elements(log || more) WITH ORDINALITY AS x(e, i)
                     WHERE i > jsonb_array_length(log || more) - 20) END
      $fn$;
