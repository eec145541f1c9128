import { deadLetterCreatedEvents, operationalEvents } from '../sql/fragments/operational';
import { statement } from '../sql/statement';

/**
 * A `redriving` row whose redrive did not finish (the gateway died between publishing and marking it) may be
 * redriven again after this long: publishing twice is harmless, since the worker applies an event id once.
 */
const STUCK_REDRIVE = "interval '2 minutes'";

/**
 * Archives records read from the DLQ, each once (by its partition and offset), and emits dead_letter.created for
 * each one archived now (not for one copied before: a replica, or a restart, reads it again).
 */
export const ARCHIVE_DEAD_LETTERS = statement({
  name: 'archive-dead-letters',
  runBy: 'DeadLetterRepository.archive',
  params: [
    'the DLQ partitions',
    'the DLQ offsets',
    'when each was dead-lettered',
    'why',
    'the topics they came from, or null',
    'the partitions they came from, or null',
    'the offsets they came from, or null',
    "the records' keys",
    'their values',
    'their headers (jsonb)',
    'whether each was truncated',
  ],
  text: `
WITH archived AS (
  INSERT INTO dead_letters (dlq_partition, dlq_offset, dead_lettered_at, reason, origin_topic, origin_partition,
                            origin_offset, key, value, headers, truncated)
  SELECT * FROM unnest($1::int[], $2::bigint[], $3::timestamptz[], $4::text[], $5::text[], $6::int[], $7::bigint[],
                       $8::bytea[], $9::bytea[], $10::jsonb[], $11::boolean[])
  ON CONFLICT (dlq_partition, dlq_offset) DO NOTHING
  RETURNING id, dead_lettered_at, reason, origin_topic, origin_partition, origin_offset, key, truncated
), ${operationalEvents(deadLetterCreatedEvents('archived'))}
SELECT (SELECT count(*) FROM archived)::int AS stored`,
});

export const LIST_DEAD_LETTERS = statement({
  name: 'list-dead-letters',
  runBy: 'DeadLetterRepository.list',
  params: [
    'the status, or null for all',
    'the page: ids below this one, or null for the newest',
    'how many rows at most',
  ],
  text: `SELECT *, id AS seq FROM dead_letters
       WHERE ($1::text IS NULL OR status = $1) AND ($2::bigint IS NULL OR id < $2)
       ORDER BY id DESC LIMIT $3`,
});

export const COUNT_DEAD = statement({
  name: 'count-dead',
  runBy: 'DeadLetterRepository.countDead',
  params: [],
  text: "SELECT count(*)::int AS n FROM dead_letters WHERE status = 'dead'",
});

export const FIND_DEAD_LETTERS = statement({
  name: 'find-dead-letters',
  runBy: 'DeadLetterRepository.findByIds',
  params: ["the dead letters' ids"],
  text: 'SELECT *, id AS seq FROM dead_letters WHERE id = ANY($1::bigint[]) ORDER BY id',
});

/** Takes dead letters (or ones whose redrive got stuck) to redrive. */
export const START_REDRIVE = statement({
  name: 'start-redrive',
  runBy: 'DeadLetterRepository.startRedrive',
  params: ["the dead letters' ids", 'who redrives them'],
  text: `UPDATE dead_letters SET status = 'redriving', changed_at = now(), changed_by = $2
       WHERE id = ANY($1::bigint[])
         AND (status = 'dead' OR (status = 'redriving' AND changed_at < now() - ${STUCK_REDRIVE}))
       RETURNING *, id AS seq`,
});

export const FINISH_REDRIVE = statement({
  name: 'finish-redrive',
  runBy: 'DeadLetterRepository.finishRedrive',
  params: ["the dead letters' ids", 'redriven (published) or dead (back as they were)'],
  text: `UPDATE dead_letters SET status = $2, changed_at = now() WHERE id = ANY($1::bigint[]) AND status = 'redriving'`,
});

export const DISCARD_DEAD_LETTERS = statement({
  name: 'discard-dead-letters',
  runBy: 'DeadLetterRepository.discard',
  params: ["the dead letters' ids", 'who discards them'],
  text: `UPDATE dead_letters SET status = 'discarded', changed_at = now(), changed_by = $2
       WHERE id = ANY($1::bigint[]) AND status = 'dead'
       RETURNING *, id AS seq`,
});
