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
  /** What the scenario's own checks found (a 200 while below min.insync.replicas, a fault that did not happen). */
  failures?: string[];
  passed: boolean;
}

/** Waits until every acknowledged plant has reached the receiver, or nothing has moved for `idleMs`. */
export async function settle(ledger: LedgerEntry[], receiver: ChaosReceiver, idleMs = 90_000): Promise<void> {
  const acked = ledger.filter((e) => e.ackedAt !== undefined);
  let last = -1;
  let lastMoved = Date.now();
  for (;;) {
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
  const recorded = await pool.query<{ event_id: string; attempts: number }>(
    'SELECT event_id, sum(attempts)::int AS attempts FROM all_deliveries WHERE event_id = ANY($1::text[]) GROUP BY event_id',
    [twiceDelivered.map((e) => e.eventId!)],
  );
  const attempts = new Map(recorded.rows.map((r) => [r.event_id, r.attempts]));
  const unrecorded = twiceDelivered.reduce(
    (n, e) => n + Math.max(0, receiver.acknowledged.get(e.eventId!)! - (attempts.get(e.eventId!) ?? 0)),
    0,
  );
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

const round = (s: number) => (Number.isFinite(s) ? Math.round(s * 10) / 10 : s);
