import { Pool } from 'pg';
import { AttemptRecord, ClaimedDelivery, IngestEvent, LeasedRef, IntakeOffer } from '@app/delivery';
import { AuditRepository } from '../audit/audit.repository';
import { BackfillRepository } from '../backfills/backfill.repository';
import { ArchivedDeadLetter, DeadLetterRepository } from '../dead-letters/dead-letter.repository';
import { DeliveryRepository } from '../deliveries/delivery.repository';
import { OutboxRepository } from '../deliveries/outbox.repository';
import { SubscriberHealthRepository } from '../subscriber-health/subscriber-health.repository';
import { IngestRepository } from '../ingest/ingest.repository';
import { OperationalEventRepository } from '../operational/operational-event.repository';
import { PlantRepository } from '../plants/plant.repository';
import { PortalLinkRepository } from '../portal-links/portal-link.repository';
import { RetentionRepository } from '../retention/retention.repository';
import { SecretBox } from '../secrets/secret-box';
import { NewSubscription, SubscriptionRepository } from '../subscriptions/subscription.repository';
import { SubscriptionChanges } from '../subscriptions/subscription-changes';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { SQL_FILES, STATEMENTS } from './statements';

const all = Object.values(STATEMENTS).flat();

describe('the statements', () => {
  it('have names of their own', () => {
    const names = all.map((s) => s.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  // A statement file no repository loads would be SQL that is read nowhere, and its statements tested nowhere.
  it('come from every .sql file beside a repository (migrations aside)', () => {
    const root = path.resolve(__dirname, '..');
    const files = readdirSync(root, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.sql') && !f.startsWith(`schema${path.sep}`))
      .map((f) => path.join(root, f));
    expect(files.sort()).toEqual(
      Object.values(SQL_FILES)
        .map((f) => f.path)
        .sort(),
    );
  });

  it('say what each of their parameters means, and no more', () => {
    const wrong = all.filter((s) => {
      const used = new Set([...s.text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
      return used.size !== s.params.length || [...used].some((n) => n < 1 || n > s.params.length);
    });
    expect(wrong.map((s) => s.name)).toEqual([]);
  });

  // What the .sql files hold is what is sent: every method of every repository is called on a
  // pool that records the text it is given, and each text must be a listed statement's, as it is.
  it('are every text the repositories send', async () => {
    const sent: string[] = [];
    const row = {
      version: '1',
      subscribers: [],
      sending_events: [],
      sending_subscriptions: [],
      due_events: 0,
      events: 0,
      deferred: 0,
      deferred_for: [],
      subscription_id: null,
      due: 0,
      id: null,
      n: 0,
      fanned: [],
    };
    // A backfill that queues: its tick sends every one of its statements.
    Object.assign(row, {
      subscription_enabled: true,
      pending: 0,
      state: 'running',
      exhausted: false,
      rate_per_second: 1,
    });
    // A partition of the delivery log is named by its day, which the statement's text says as DAY.
    const partition = { locked: true, made: 0, day: '20000101', state: 'attached', estimated_rows: 0 };
    const poolWith = (extra: object) => {
      const query = async (q: string | { text: string }) => {
        sent.push((typeof q === 'string' ? q : q.text).replace(/delivery_log_\d{8}/, 'delivery_log_DAY'));
        const fields = { fresh: [], applied: [], unchanged: [], key_reused: [], suppressed: [], ...extra };
        return { rows: [{ ...row, ...fields }], rowCount: 0 };
      };
      return {
        query,
        connect: async () => ({ query, release: () => undefined, on: () => undefined }),
      } as unknown as Pool;
    };
    const pool = poolWith({});
    const box = new SecretBox(Buffer.alloc(32, 1));
    const lease = { token: '00000000-0000-4000-8000-000000000000', until: 0 };
    const delivery = (hasRow: boolean) => ({ id: 'd', hasRow, lease, eventId: 'e' }) as unknown as ClaimedDelivery;
    const attempt = (hasRow: boolean) =>
      ({ delivery: delivery(hasRow), attempt: {}, outcome: { kind: 'retry', delayMs: 1 } }) as unknown as AttemptRecord;
    const ref = { id: 'x', token: lease.token } as LeasedRef;
    const outbox = new OutboxRepository(pool, box);
    const deliveries = new DeliveryRepository(pool);
    const subscriptions = new SubscriptionRepository(pool, box);
    const plants = new PlantRepository(pool);
    const audit = new AuditRepository(pool);
    const deadLetters = new DeadLetterRepository(pool);
    const portalLinks = new PortalLinkRepository(pool);
    const health = new SubscriberHealthRepository(pool);
    const backfills = new BackfillRepository(pool);
    const calls: (() => Promise<unknown>)[] = [
      () => outbox.fanOut(1, [], 1),
      () => outbox.claimDue(1, [], 1),
      () => outbox.record([attempt(true), attempt(false)]),
      // Every one a success sent from memory: the cheap statement first (its answer here sends the general one too).
      () => outbox.record([{ ...attempt(false), outcome: { kind: 'succeeded' } }]),
      () => outbox.renewLeases([delivery(true)], 1),
      () => outbox.releaseLeases([ref], [ref]),
      () => outbox.countPending(),
      () => deliveries.listNewest({}, 1, null),
      () => deliveries.listNewest({ subscriptionId: 'a4b2c3d4-0000-4000-8000-000000000001' }, 1, null),
      () => deliveries.findById('d'),
      () => deliveries.retryFailed('d'),
      () => deliveries.retryFailedMatching({}),
      () => deliveries.countByStatus(1),
      () => deliveries.perMinute(1),
      () => deliveries.retryFailedSince('s', new Date()),
      () => deliveries.replaySince('s', new Date(), 0, { limit: 1, scan: 1, settleMs: 1 }),
      () => deliveries.holdReplay('s', 'h', 1),
      () => deliveries.releaseReplay('s', 'h'),
      () =>
        new IngestRepository(pool, box).applyEvents(
          [{ extra: {} } as IngestEvent],
          { leaseMs: 1, limit: 1, skipSubscriptions: [] } as unknown as IntakeOffer,
          1,
          { version: '1', bodies: ['{}'], pairs: [] },
        ),
      () =>
        subscriptions.create({
          token: 't',
          secret: 's',
          headers: { plain: {}, secret: {} },
          destination: { settings: {}, secrets: {} },
        } as unknown as NewSubscription),
      () => subscriptions.list(),
      () => subscriptions.findById('s'),
      () => subscriptions.update('s', {}),
      () => subscriptions.delete('s'),
      () => subscriptions.rotateSecret('s', 'n', null, 1),
      () => subscriptions.findSendable('s'),
      () => portalLinks.create({ subscriptionId: 's', description: null, createdBy: 'a', lifetimeSeconds: 60 }),
      () => portalLinks.list('s'),
      () => portalLinks.revoke('s', 'l', 'a'),
      () => portalLinks.findByToken('psp_x'),
      () => health.heartbeat('r', 1),
      () => health.leave('r'),
      () => health.disableOverBacklog(1),
      () => health.pause('s', 1, 'r'),
      () => health.startProbe('s', 1),
      () =>
        health.recordOutcomes([{ subscriptionId: 's', succeeded: false, failures: 1, lastError: null }], {
          failuresToOpen: 1,
          probeMinMs: 1,
          probeMaxMs: 1,
          disableAfterMs: 1,
        }),
      () => subscriptions.load(),
      () => subscriptions.loadChanges({ version: '1', subscribers: new Map() }),
      () => new SubscriptionChanges(pool, () => undefined).poll(),
      () => plants.findById(1),
      () => plants.listNewest(1, null),
      () => plants.countStoredSince(1),
      () => audit.record({ actor: 'a', action: 'b' }),
      () => audit.recordMany([{ actor: 'a', action: 'b' }]),
      () => audit.list({}, 1, null),
      () => audit.countRecent('s', 'b', 'portal-link:', 60),
      () => backfills.create('s', null, 1, 'a'),
      () => backfills.list('s'),
      () => backfills.findById('b', 's'),
      () => backfills.cancel('b', 's'),
      () => backfills.claim(1, 1, 't'),
      () => backfills.tick({ id: 'b', token: 't' }, { elapsedMs: 1000, pendingSeconds: 1, settleMs: 1, leaseMs: 1 }),
      () => backfills.release([{ id: 'b', token: 't' }]),
      () => deadLetters.archive([{ headers: {} } as ArchivedDeadLetter]),
      () => new OperationalEventRepository(pool).emit('dead_letter.created', {} as never),
      () => deadLetters.list(undefined, 1, null),
      () => deadLetters.countDead(),
      () => deadLetters.findByIds([1]),
      () => deadLetters.startRedrive([1], 'a'),
      () => deadLetters.finishRedrive([1], true),
      () => deadLetters.discard([1], 'a'),
      ...(['processed_events', 'deliveries', 'outbox_events', 'subscriptions'] as const).map(
        (t) => () => new RetentionRepository(pool).prune(t, new Date(), 1),
      ),
      // A day past the window, attached (detached, then dropped) and half detached (finished, then dropped).
      ...['attached', 'detaching'].map(
        (state) => () => new RetentionRepository(poolWith({ ...partition, state })).maintainLog(0, new Date(), 7),
      ),
    ];
    // A method that reads rows this fake does not give may throw after it sent: what it sent is what counts.
    for (const call of calls) await call().catch(() => undefined);
    const transaction = ['BEGIN', 'COMMIT', 'ROLLBACK'];
    const texts = new Set(all.map((s) => s.text));
    expect(sent.filter((t) => !texts.has(t) && !transaction.includes(t))).toEqual([]);
    // …and every listed statement is one a repository sends.
    expect([...texts].filter((t) => !sent.includes(t))).toEqual([]);
  });
});
