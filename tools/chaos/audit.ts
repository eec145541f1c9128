// After a scenario's load: wait for the pipeline to settle, then count, from the sender's ledger, the database
// and the receiver, what was acknowledged, stored, delivered and lost.
import { Kafka } from 'kafkajs';
import { kafkaClientConfigFromEnv } from '@app/kafka';
import { Pool } from 'pg';
import { ChaosReceiver } from './receiver';
import { LedgerEntry } from './sender';

export interface ScenarioResult {
  scenario: string;
  sent: number;
  acknowledged: number;
  /** Senders that never got a 200 (gave up after 5 min, or a 4xx): must be 0. */
  unacknowledged: number;
  stored: number;
  delivered: number;
  /** Acknowledged but not stored, or stored but never delivered: must be 0. */
  lost: number;
  /** More than one applied event for a plant sent once: must be 0. */
  storedTwice: number;
  /** Stored with another event or other data than the one acknowledged: must be 0. */
  wrongLastEvent: number;
  /** Plants delivered more than once: allowed around a crash (counted); elsewhere only as recorded attempts. */
  deliveredTwice: number;
  /**
   * Sends the receiver acknowledged that no recorded attempt accounts for (per delivery, acknowledgements beyond its
   * recorded attempts). At-least-once allows a second send (a reply later than DELIVERY_TIMEOUT_MS, a lease that ran
   * out while a record waited on a loaded database), but every attempt is recorded and listed: outside a crash of the
   * process that sent it, an unrecorded send is a failure.
   */
  unrecordedSends: number;
  sender503s: number;
  senderConnectionErrors: number;
  /** Longest time without any 200 from the fault on, seconds. */
  longestAckGapS: number;
  /** Longest a sender waited from its first attempt to its 200, retries included, seconds. */
  slowestAckS: number;
  /** From the fault's end until every plant acknowledged before it was delivered, seconds. */
  recoveredAfterS: number;
  /** From the last 200 until the last delivery, seconds. */
  settledAfterS: number;
  deadLettered?: number;
  /** Consumers the workers' watchdogs replaced during the scenario (plant_store_consumer_forced_rejoins_total). */
  forcedRejoins?: number;
  /** What the scenario's own checks found (a 200 while below min.insync.replicas, a fault that did not happen). */
  failures?: string[];
  /** The scenario's broker destination beside the receiver, audited the same way. */
  destination?: DestinationResult;
  passed: boolean;
}

/** What reached a scenario's broker destination (tools/chaos/destination.ts), counted as for the receiver. */
export interface DestinationResult {
  kind: string;
  delivered: number;
  /** Acknowledged plants not in the broker after the pipeline settled: must be 0. */
  lost: number;
  deliveredTwice: number;
  /** Messages in the broker beyond the recorded attempts of their delivery: 0 outside a crash of the sender. */
  unrecordedSends: number;
  /** From the fault's end until every plant acknowledged before it was in the broker, seconds. */
  recoveredAfterS: number;
  /** Its deliveries with more than one attempt: 0 means the fault went unnoticed (it proves nothing then). */
  retried: number;
}

/** What arrived at one destination: each webhook-id's count, each plant's first arrival. */
export interface Arrivals {
  acknowledged: Map<string, number>;
  firstDelivered: Map<number, number>;
}

/**
 * Waits until every acknowledged plant has reached the receiver (or a broker destination, read by `poll`), or
 * nothing has moved for `idleMs`.
 */
export async function settle(
  ledger: LedgerEntry[],
  receiver: Arrivals,
  idleMs = 90_000,
  poll: () => Promise<void> = async () => undefined,
): Promise<void> {
  const acked = ledger.filter((e) => e.ackedAt !== undefined);
  let last = -1;
  let lastMoved = Date.now();
  for (;;) {
    await poll().catch(() => undefined); // a broker still down: read again at the next round
    const delivered = acked.filter((e) => receiver.firstDelivered.has(e.plantId)).length;
    if (delivered === acked.length) return;
    if (delivered !== last) {
      last = delivered;
      lastMoved = Date.now();
    }
    if (Date.now() - lastMoved > idleMs) return;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Sum of the high watermarks of a topic: how many records it has ever had. */
export async function topicSize(brokers: string[], topic: string): Promise<number> {
  const env = { ...process.env, KAFKA_BROKERS: brokers.join(',') };
  const admin = new Kafka(kafkaClientConfigFromEnv(env, 'chaos-audit')).admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high), 0);
  } finally {
    await admin.disconnect();
  }
}

export async function audit(
  scenario: string,
  ledger: LedgerEntry[],
  receiver: ChaosReceiver,
  pool: Pool,
  fault: { start: number; end: number },
  duplicatesAllowed = false,
  /** The receiver's subscription: only its deliveries' attempts account for the receiver's second sends. */
  subscriptionId?: string,
): Promise<ScenarioResult> {
  const ids = ledger.map((e) => e.plantId);
  const acked = ledger.filter((e) => e.ackedAt !== undefined);
  const plants = await pool.query<{ id: string; name: string; last_event_id: string }>(
    'SELECT id, name, last_event_id FROM plants WHERE id = ANY($1::bigint[])',
    [ids],
  );
  const stored = new Map(plants.rows.map((r) => [Number(r.id), r]));
  const twice = await pool.query<{ plant_id: string }>(
    'SELECT plant_id FROM processed_events WHERE plant_id = ANY($1::bigint[]) GROUP BY plant_id HAVING count(*) > 1',
    [ids],
  );
  const wrong = acked.filter((e) => {
    const row = stored.get(e.plantId);
    return row && (row.name !== `plant-${e.plantId}` || row.last_event_id !== e.eventId);
  });
  const lost = acked.filter((e) => !stored.has(e.plantId) || !receiver.firstDelivered.has(e.plantId));
  // From the fault to each following 200: how long senders went without one (the fault's end is not a 200).
  const ackTimes = [fault.start, ...acked.map((e) => e.ackedAt!).filter((t) => t >= fault.start)].sort((a, b) => a - b);
  const gap = ackTimes.slice(1).reduce((max, t, i) => Math.max(max, t - ackTimes[i]), 0);
  const before = acked.filter((e) => e.ackedAt! <= fault.end);
  const recovered = before.reduce(
    (max, e) => Math.max(max, (receiver.firstDelivered.get(e.plantId) ?? Infinity) - fault.end),
    0,
  );
  const twiceDelivered = acked.filter((e) => (receiver.acknowledged.get(e.eventId!) ?? 0) > 1);
  await describeSecondSends(pool, receiver, twiceDelivered);
  const unrecorded = await unrecordedSends(pool, receiver, twiceDelivered, subscriptionId);
  const lastAck = Math.max(...acked.map((e) => e.ackedAt!));
  const lastDelivery = Math.max(...acked.map((e) => receiver.firstDelivered.get(e.plantId) ?? 0));
  const result: ScenarioResult = {
    scenario,
    sent: ledger.length,
    acknowledged: acked.length,
    unacknowledged: ledger.length - acked.length,
    stored: ids.filter((id) => stored.has(id)).length,
    delivered: ids.filter((id) => receiver.firstDelivered.has(id)).length,
    lost: lost.length,
    storedTwice: twice.rowCount ?? 0,
    wrongLastEvent: wrong.length,
    deliveredTwice: twiceDelivered.length,
    unrecordedSends: unrecorded,
    sender503s: ledger.reduce((n, e) => n + e.unavailable, 0),
    senderConnectionErrors: ledger.reduce((n, e) => n + e.connectionErrors, 0),
    longestAckGapS: round(gap / 1000),
    slowestAckS: round(acked.reduce((max, e) => Math.max(max, e.ackedAt! - e.firstSentAt), 0) / 1000),
    recoveredAfterS: round(Math.max(0, recovered) / 1000),
    settledAfterS: round(Math.max(0, lastDelivery - lastAck) / 1000),
    passed: false,
  };
  result.passed =
    result.lost === 0 &&
    result.unacknowledged === 0 &&
    result.storedTwice === 0 &&
    result.wrongLastEvent === 0 &&
    (duplicatesAllowed || result.unrecordedSends === 0);
  return result;
}

/**
 * Sends a destination took that no recorded attempt accounts for: per delivery, its arrivals beyond its recorded
 * attempts. Each delivery is counted once by its id: a send written down as a second row of the same delivery (the
 * log has no unique key; a fan-out that handed one pair out twice wrote two rows of one attempt each) is not a
 * record of it, and shows here as unrecorded.
 */
async function unrecordedSends(
  pool: Pool,
  at: Arrivals,
  twice: LedgerEntry[],
  subscriptionId: string | undefined,
): Promise<number> {
  const recorded = await pool.query<{ event_id: string; attempts: number }>(
    `SELECT event_id, sum(attempts)::int AS attempts FROM (
       SELECT DISTINCT ON (id) event_id, attempts FROM all_deliveries
       WHERE event_id = ANY($1::text[]) AND ($2::uuid IS NULL OR subscription_id = $2::uuid)
       ORDER BY id, attempts DESC) d
     GROUP BY event_id`,
    [twice.map((e) => e.eventId!), subscriptionId ?? null],
  );
  const attempts = new Map(recorded.rows.map((r) => [r.event_id, r.attempts]));
  return twice.reduce((n, e) => n + Math.max(0, at.acknowledged.get(e.eventId!)! - (attempts.get(e.eventId!) ?? 0)), 0);
}

/** The same count for a scenario's broker destination: every acknowledged plant must be there. */
export async function auditDestination(
  kind: string,
  subscriptionId: string,
  ledger: LedgerEntry[],
  at: Arrivals,
  pool: Pool,
  fault: { start: number; end: number },
): Promise<DestinationResult> {
  const acked = ledger.filter((e) => e.ackedAt !== undefined);
  const twice = acked.filter((e) => (at.acknowledged.get(e.eventId!) ?? 0) > 1);
  const retried = await pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM all_deliveries WHERE subscription_id = $1::uuid AND attempts > 1',
    [subscriptionId],
  );
  const recovered = acked
    .filter((e) => e.ackedAt! <= fault.end)
    .reduce((max, e) => Math.max(max, (at.firstDelivered.get(e.plantId) ?? Infinity) - fault.end), 0);
  return {
    kind,
    delivered: ledger.filter((e) => at.firstDelivered.has(e.plantId)).length,
    lost: acked.filter((e) => !at.firstDelivered.has(e.plantId)).length,
    deliveredTwice: twice.length,
    unrecordedSends: await unrecordedSends(pool, at, twice, subscriptionId),
    recoveredAfterS: round(Math.max(0, recovered) / 1000),
    retried: retried.rows[0].n,
  };
}

const round = (s: number) => (Number.isFinite(s) ? Math.round(s * 10) / 10 : s);

/**
 * For whoever has to find out why: each plant delivered more than once (the first 20), what its sender went through,
 * when the receiver acknowledged each send, and every recorded delivery of its event with its attempt log (which
 * table holds it, the attempts' times, statuses and errors). Two sends a few ms apart in two log rows with one key
 * were fanned out twice at once; one row whose second attempt came a lease later was sent again after a lapse.
 */
async function describeSecondSends(pool: Pool, receiver: ChaosReceiver, twice: LedgerEntry[]) {
  if (twice.length === 0) return;
  const shown = twice.slice(0, 20);
  const { rows } = await pool.query<{
    event_id: string;
    subscription_id: string;
    id: string;
    appended: boolean;
    status: string;
    attempts: number;
    created_at: Date;
    attempt_log: { attemptedAt: string; status: number | null; latencyMs: number; error: string | null }[];
    kafka_partition: number;
    kafka_offset: string;
  }>(
    `SELECT d.event_id, d.subscription_id, d.id, d.appended, d.status, d.attempts, d.created_at, d.attempt_log,
            p.kafka_partition, p.kafka_offset
     FROM all_deliveries d LEFT JOIN processed_events p USING (event_id)
     WHERE d.event_id = ANY($1::text[]) ORDER BY d.event_id, d.seq`,
    [shown.map((e) => e.eventId!)],
  );
  const at = (t: number | string) => new Date(t).toISOString().slice(11, 23);
  console.log(`  delivered more than once (${shown.length} of ${twice.length} shown):`);
  for (const e of shown) {
    const sends = (receiver.arrivals.get(e.eventId!) ?? []).map(at).join(', ');
    const told = [e.first503, e.last503].filter((a) => a !== undefined).map((a) => outcomeOf(a.body));
    console.log(
      `    plant ${e.plantId} event ${e.eventId}: sender ${e.attempts} attempts, ${e.unavailable} 503s, ` +
        `${e.connectionErrors} connection errors${told.length > 0 ? ` (503s said: ${told.join(', ')})` : ''}; ` +
        `receiver acknowledged at ${sends}`,
    );
    for (const r of rows.filter((x) => x.event_id === e.eventId)) {
      const log = r.attempt_log
        .map((a) => `${at(a.attemptedAt)} ${a.status ?? 'no answer'} ${a.latencyMs}ms${a.error ? ` (${a.error})` : ''}`)
        .join('; ');
      console.log(
        `      ${r.appended ? 'delivery_log' : 'deliveries'} ${r.id} ${r.status} attempts=${r.attempts} ` +
          `created ${at(r.created_at.getTime())} [@${r.kafka_partition}:${r.kafka_offset}]: ${log}`,
      );
    }
  }
}

/** What a 503 said of the publish (`unknown`: it may yet be written, and the retry puts the event on the topic twice). */
function outcomeOf(body: string): string {
  try {
    return String((JSON.parse(body) as { outcome?: unknown }).outcome ?? '?');
  } catch {
    return '?';
  }
}
