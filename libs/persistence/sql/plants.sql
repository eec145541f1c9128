-- Generated from libs/persistence/src by `npm run generate:sql`: do not edit (a test fails while it is stale).
-- Every plants statement the repositories send, exactly as sent, with what each parameter means.

-- find-plant
-- Sent by PlantRepository.findById.
-- $1: the plant's id
SELECT * FROM plants WHERE id = $1;

-- list-plants
-- Sent by PlantRepository.listNewest.
-- $1: the page: rows numbered below this seq, or null for the newest
-- $2: how many rows at most
SELECT * FROM plants WHERE ($1::bigint IS NULL OR seq < $1) ORDER BY seq DESC LIMIT $2;

-- count-stored-since
-- Sent by PlantRepository.countStoredSince.
-- $1: the window, hours back from now
SELECT count(*)::int AS n FROM processed_events WHERE processed_at >= now() - $1 * interval '1 hour';
