-- who receives a plant and the body it is sent, as SQL functions
-- Two rules several statements share, each written once here rather than pasted into every statement as text
-- (issue #38): whether a subscription's filter takes a plant (fan-out, backfill), and the NewPlant body a
-- delivery sends from a plants-shaped row (backfill). Plain expressions in LANGUAGE sql, so PostgreSQL inlines
-- them into the statement that calls them: the plans are the ones the pasted text had.

      CREATE FUNCTION plant_matches_filter(f jsonb, plant_id bigint, plant_tag text) RETURNS boolean
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
        SELECT (NOT f ? 'tags' OR coalesce(f->'tags' ? plant_tag, false))
           AND (f #>> '{plantIds,min}' IS NULL OR plant_id >= (f #>> '{plantIds,min}')::bigint)
           AND (f #>> '{plantIds,max}' IS NULL OR plant_id <= (f #>> '{plantIds,max}')::bigint)
      $fn$;

      CREATE FUNCTION new_plant_body(extra jsonb, id bigint, name text, tag text) RETURNS text
      LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
        SELECT (extra || jsonb_strip_nulls(jsonb_build_object('id', id, 'name', name, 'tag', tag)))::text
      $fn$;
