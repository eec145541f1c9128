-- Dead letters: records the worker could not apply, archived from the DLQ once each, listed, redriven (published
-- again) or discarded by an operator.

-- @name archive-dead-letters
-- Archives records read from the DLQ, each once (by its partition and offset), and emits dead_letter.created for
-- each one archived now (not for one copied before: a replica, or a restart, reads it again). Sent by
-- DeadLetterRepository.archive.
-- :dlqPartitions the DLQ partitions
-- :dlqOffsets the DLQ offsets
-- :deadLetteredAt when each was dead-lettered
-- :reasons why
-- :originTopics the topics they came from, or null
-- :originPartitions the partitions they came from, or null
-- :originOffsets the offsets they came from, or null
-- :keys the records' keys
-- :values their values
-- :headers their headers (jsonb)
-- :truncated whether each was truncated
WITH archived AS (
  INSERT INTO dead_letters (dlq_partition, dlq_offset, dead_lettered_at, reason, origin_topic, origin_partition,
                            origin_offset, key, value, headers, truncated)
  SELECT * FROM unnest(:dlqPartitions::int[], :dlqOffsets::bigint[], :deadLetteredAt::timestamptz[], :reasons::text[],
                       :originTopics::text[], :originPartitions::int[], :originOffsets::bigint[], :keys::bytea[],
                       :values::bytea[], :headers::jsonb[], :truncated::boolean[])
  ON CONFLICT (dlq_partition, dlq_offset) DO NOTHING
  RETURNING id, dead_lettered_at, reason, origin_topic, origin_partition, origin_offset, key, truncated
), op_deliveries AS (
  INSERT INTO deliveries (subscription_id, event_id, event_type, body, event_time)
  SELECT * FROM operational_deliveries(ARRAY(
    SELECT dead_letter_created_event(x.id, x.reason, x.dead_lettered_at, x.origin_topic, x.origin_partition,
                                     x.origin_offset, x.key, x.truncated)
    FROM archived x))
  RETURNING 1
)
SELECT (SELECT count(*) FROM archived)::int AS stored;

-- @name list-dead-letters
-- Sent by DeadLetterRepository.list.
-- :status the status, or null for all
-- :before the page: ids below this one, or null for the newest
-- :limit how many rows at most
SELECT *, id AS seq FROM dead_letters
  WHERE (:status::text IS NULL OR status = :status) AND (:before::bigint IS NULL OR id < :before)
  ORDER BY id DESC LIMIT :limit;

-- @name count-dead
-- Sent by DeadLetterRepository.countDead.
SELECT count(*)::int AS n FROM dead_letters WHERE status = 'dead';

-- @name find-dead-letters
-- Sent by DeadLetterRepository.findByIds.
-- :ids the dead letters' ids
SELECT *, id AS seq FROM dead_letters WHERE id = ANY(:ids::bigint[]) ORDER BY id;

-- @name start-redrive
-- Takes dead letters (or ones whose redrive got stuck) to redrive. Sent by DeadLetterRepository.startRedrive.
-- :ids the dead letters' ids
-- :actor who redrives them
UPDATE dead_letters SET status = 'redriving', changed_at = now(), changed_by = :actor
  WHERE id = ANY(:ids::bigint[])
    AND (status = 'dead' OR (status = 'redriving' AND changed_at < now() - interval '2 minutes'))
  RETURNING *, id AS seq;

-- @name finish-redrive
-- Sent by DeadLetterRepository.finishRedrive.
-- :ids the dead letters' ids
-- :redriven redriven (published) or dead (back as they were)
UPDATE dead_letters SET status = :redriven, changed_at = now() WHERE id = ANY(:ids::bigint[]) AND status = 'redriving';

-- @name discard-dead-letters
-- Sent by DeadLetterRepository.discard.
-- :ids the dead letters' ids
-- :actor who discards them
UPDATE dead_letters SET status = 'discarded', changed_at = now(), changed_by = :actor
  WHERE id = ANY(:ids::bigint[]) AND status = 'dead'
  RETURNING *, id AS seq;
