import { Pool } from 'pg';
import { toStorableText } from '@app/contracts';
import {
  BreakerPolicy,
  CircuitState,
  HealthTransition,
  OutcomeSummary,
  SubscriberGate,
  SubscriberHealth,
} from '@app/delivery';
import { sqlFile } from '../sql/sql-file';

export const SUBSCRIBER_HEALTH_SQL = sqlFile(__dirname, 'subscriber-health.sql');
const HEARTBEAT = SUBSCRIBER_HEALTH_SQL.statement('subscriber-heartbeat');
const LEAVE = SUBSCRIBER_HEALTH_SQL.statement('subscriber-heartbeat-leave');
const PAUSE = SUBSCRIBER_HEALTH_SQL.statement('subscriber-pause');
const START_PROBE = SUBSCRIBER_HEALTH_SQL.statement('subscriber-start-probe');
const RECORD_HEALTH = SUBSCRIBER_HEALTH_SQL.statement('subscriber-record-health');
const DISABLE_OVER_BACKLOG = SUBSCRIBER_HEALTH_SQL.statement('disable-over-backlog');

interface GateRow {
  replicas: string[];
  subscription_id: string | null;
  max_deliveries_per_second: number | null;
  max_concurrency: number | null;
  paused_for_ms: number | null;
  circuit_state: CircuitState;
  probe_in_ms: number | null;
  consecutive_failures: number;
}

interface HealthRow {
  subscription_id: string;
  closed: boolean;
  opened: boolean;
  probe_failed: boolean;
  disable: boolean;
  disabled_reason: string | null;
  last_error: string | null;
  probe_in_ms: number | null;
}

/**
 * The subscribers' shared health (see SubscriberHealth): every transition is made here, one statement each, with
 * its audit event; the worker's dispatcher reads the rest with a heartbeat a second.
 */
export class SubscriberHealthRepository implements SubscriberHealth {
  constructor(private readonly pool: Pool) {}

  async heartbeat(replicaId: string, liveMs: number): Promise<{ replicas: string[]; gates: SubscriberGate[] }> {
    const { rows } = await this.pool.query<GateRow>({
      name: HEARTBEAT.name,
      text: HEARTBEAT.text,
      values: HEARTBEAT.values({ replica: replicaId, liveWithinMs: liveMs }),
    });
    return {
      replicas: rows[0].replicas,
      gates: rows
        .filter((r) => r.subscription_id !== null)
        .map((r) => ({
          subscriptionId: r.subscription_id!,
          maxDeliveriesPerSecond: r.max_deliveries_per_second,
          maxConcurrency: r.max_concurrency,
          pausedForMs: r.paused_for_ms,
          circuit: r.circuit_state,
          probeInMs: r.probe_in_ms,
          consecutiveFailures: r.consecutive_failures,
        })),
    };
  }

  async leave(replicaId: string): Promise<void> {
    await this.pool.query(LEAVE.text, LEAVE.values({ replica: replicaId }));
  }

  async recordOutcomes(outcomes: OutcomeSummary[], policy: BreakerPolicy): Promise<HealthTransition[]> {
    if (outcomes.length === 0) return [];
    const col = <T>(f: (o: OutcomeSummary) => T) => outcomes.map(f);
    const { rows } = await this.pool.query<HealthRow>({
      name: RECORD_HEALTH.name,
      text: RECORD_HEALTH.text,
      values: RECORD_HEALTH.values({
        subscriptions: col((o) => o.subscriptionId),
        succeeded: col((o) => o.succeeded),
        failures: col((o) => o.failures),
        lastError: col((o) => (o.lastError === null ? null : toStorableText(o.lastError))),
        failuresToOpen: policy.failuresToOpen,
        probeMinMs: policy.probeMinMs,
        probeMaxMs: policy.probeMaxMs,
        disableAfterMs: policy.disableAfterMs,
      }),
    });
    const transitions: HealthTransition[] = [];
    for (const r of rows) {
      const id = r.subscription_id;
      if (r.closed) transitions.push({ subscriptionId: id, kind: 'circuit_closed' });
      if (r.opened)
        transitions.push({
          subscriptionId: id,
          kind: 'circuit_opened',
          forMs: r.probe_in_ms ?? 0,
          reason: r.last_error,
        });
      if (r.probe_failed)
        transitions.push({ subscriptionId: id, kind: 'probe_failed', forMs: r.probe_in_ms ?? 0, reason: r.last_error });
      if (r.disable) transitions.push({ subscriptionId: id, kind: 'disabled', reason: r.disabled_reason });
    }
    return transitions;
  }

  async pause(subscriptionId: string, forMs: number, reason: string): Promise<HealthTransition | null> {
    const { rows } = await this.pool.query<{ for_ms: number }>(
      PAUSE.text,
      PAUSE.values({ id: subscriptionId, forMs, reason: toStorableText(reason) }),
    );
    return rows[0] ? { subscriptionId, kind: 'paused', forMs: rows[0].for_ms, reason } : null;
  }

  async startProbe(subscriptionId: string, holdMs: number): Promise<boolean> {
    const { rows } = await this.pool.query(START_PROBE.text, START_PROBE.values({ id: subscriptionId, holdMs }));
    return rows.length > 0;
  }

  /** Disables the failing subscriptions holding more than `max` pending deliveries; how many (disable-over-backlog). */
  async disableOverBacklog(max: number): Promise<number> {
    const { rows } = await this.pool.query<{ disabled: number }>(
      DISABLE_OVER_BACKLOG.text,
      DISABLE_OVER_BACKLOG.values({ pendingMax: max }),
    );
    return rows[0]?.disabled ?? 0;
  }
}
