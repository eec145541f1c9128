-- Generated from libs/persistence/src by `npm run generate:sql`: do not edit (a test fails while it is stale).
-- Every dead-letters statement the repositories send, exactly as sent, with what each parameter means.

-- archive-dead-letters
-- Sent by DeadLetterRepository.archive.
-- $1: the DLQ partitions
-- $2: the DLQ offsets
-- $3: when each was dead-lettered
-- $4: why
-- $5: the topics they came from, or null
-- $6: the partitions they came from, or null
-- $7: the offsets they came from, or null
-- $8: the records' keys
-- $9: their values
-- $10: their headers (jsonb)
-- $11: whether each was truncated
WITH archived AS (
  INSERT INTO dead_letters (dlq_partition, dlq_offset, dead_lettered_at, reason, origin_topic, origin_partition,
                            origin_offset, key, value, headers, truncated)
  SELECT * FROM unnest($1::int[], $2::bigint[], $3::timestamptz[], $4::text[], $5::text[], $6::int[], $7::bigint[],
                       $8::bytea[], $9::bytea[], $10::jsonb[], $11::boolean[])
  ON CONFLICT (dlq_partition, dlq_offset) DO NOTHING
  RETURNING id, dead_lettered_at, reason, origin_topic, origin_partition, origin_offset, key, truncated
), op_deliveries AS (
  INSERT INTO deliveries (subscription_id, event_id, event_type, body, event_time)
  SELECT * FROM operational_deliveries(ARRAY(
    SELECT ROW(x.type, x.subscription_id, x.data)::operational_event FROM (
  SELECT e.* FROM archived x,
    dead_letter_created_event(x.id, x.reason, x.dead_lettered_at, x.origin_topic, x.origin_partition, x.origin_offset,
                              x.key, x.truncated) e) x))
  RETURNING 1
)
SELECT (SELECT count(*) FROM archived)::int AS stored;

-- list-dead-letters
-- Sent by DeadLetterRepository.list.
-- $1: the status, or null for all
-- $2: the page: ids below this one, or null for the newest
-- $3: how many rows at most
SELECT *, id AS seq FROM dead_letters
       WHERE ($1::text IS NULL OR status = $1) AND ($2::bigint IS NULL OR id < $2)
       ORDER BY id DESC LIMIT $3;

-- count-dead
-- Sent by DeadLetterRepository.countDead.
SELECT count(*)::int AS n FROM dead_letters WHERE status = 'dead';

-- find-dead-letters
-- Sent by DeadLetterRepository.findByIds.
-- $1: the dead letters' ids
SELECT *, id AS seq FROM dead_letters WHERE id = ANY($1::bigint[]) ORDER BY id;

-- start-redrive
-- Sent by DeadLetterRepository.startRedrive.
-- $1: the dead letters' ids
-- $2: who redrives them
UPDATE dead_letters SET status = 'redriving', changed_at = now(), changed_by = $2
       WHERE id = ANY($1::bigint[])
         AND (status = 'dead' OR (status = 'redriving' AND changed_at < now() - interval '2 minutes'))
       RETURNING *, id AS seq;

-- finish-redrive
-- Sent by DeadLetterRepository.finishRedrive.
-- $1: the dead letters' ids
-- $2: redriven (published) or dead (back as they were)
UPDATE dead_letters SET status = $2, changed_at = now() WHERE id = ANY($1::bigint[]) AND status = 'redriving';

-- discard-dead-letters
-- Sent by DeadLetterRepository.discard.
-- $1: the dead letters' ids
-- $2: who discards them
UPDATE dead_letters SET status = 'discarded', changed_at = now(), changed_by = $2
       WHERE id = ANY($1::bigint[]) AND status = 'dead'
       RETURNING *, id AS seq;
