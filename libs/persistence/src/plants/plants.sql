-- Reading the store. Plants are written only by the ingest statement (../ingest).

-- @name find-plant
-- Sent by PlantRepository.findById.
-- :id the plant's id
SELECT * FROM plants WHERE id = :id;

-- @name list-plants
-- Sent by PlantRepository.listNewest.
-- :before the page: rows numbered below this seq, or null for the newest
-- :limit how many rows at most
SELECT * FROM plants WHERE (:before::bigint IS NULL OR seq < :before) ORDER BY seq DESC LIMIT :limit;

-- @name count-stored-since
-- Events stored in the window. Sent by PlantRepository.countStoredSince.
-- :hours the window, hours back from now
SELECT count(*)::int AS n FROM processed_events WHERE processed_at >= now() - :hours * interval '1 hour';
