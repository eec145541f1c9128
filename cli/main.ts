// `npx plant-store …`: the admin API from a terminal. PLANT_STORE_URL (default http://127.0.0.1:3000) and
// PLANT_STORE_ADMIN_TOKEN (or a file: PLANT_STORE_ADMIN_TOKEN_FILE, --admin-token-file); `send` uses
// PLANT_STORE_WEBHOOK_TOKEN (or its _FILE). Tokens on the command line warn (credentials.ts). Tables by default,
// --json for scripts. Every admin call goes through the typed client generated from the served document, so
// the paths, parameters, bodies and the columns below are checked against it (`npx tsc`).
// Exit codes: 0 done, 1 the API refused (its reason printed), 2 a wrong command line, 3 unreachable or 5xx.
// Loaded by plant-store.js (the package's `bin`), which compiles it on the fly.
import { randomUUID } from 'node:crypto';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { Schema } from '@app/api-client';
import type { operations } from '@app/contracts/openapi/shapes';
import { OPERATIONAL_EVENT_TYPES } from '@app/contracts/operational-events';
import { adminApi, ApiError, EXIT, postWebhook } from './api';
import { readToken } from './credentials';
import { asJson, writeErr, writeOut } from './output';
import { type Column, details, table } from './table';

type Query<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;

interface GlobalOptions {
  url: string;
  adminToken?: string;
  adminTokenFile?: string;
  json?: boolean;
}

const program = new Command('plant-store')
  .description('Operate a Plant Store: subscriptions, deliveries, dead letters, and test webhooks')
  .addOption(new Option('--url <url>', 'the gateway').env('PLANT_STORE_URL').default('http://127.0.0.1:3000'))
  // The token: PLANT_STORE_ADMIN_TOKEN, or a file. The flag is kept for scripts that use it, with a warning.
  .option('--admin-token-file <path>', 'read the admin token (read or write scope) from this file (- for stdin)')
  .option('--admin-token <token>', 'the admin token itself: shown in the process list, prefer the file or variable')
  .option('--json', 'print JSON (for scripts) instead of tables')
  .showHelpAfterError('(add --help for usage)')
  // Its help and its complaints quote what was typed: written the way every other output is (output.ts).
  .configureOutput({ writeOut, writeErr })
  .exitOverride();

const opts = () => program.opts<GlobalOptions>();
/** The admin API with the operator's token (read now: a token file is read, or warned about, once per call). */
const admin = () =>
  adminApi({
    url: opts().url,
    token: readToken({
      flag: 'admin-token',
      value: opts().adminToken,
      file: opts().adminTokenFile,
      variable: 'PLANT_STORE_ADMIN_TOKEN',
    }),
    tokenVariable: 'PLANT_STORE_ADMIN_TOKEN',
  });

/** Prints the JSON, or the human form (each through output.ts: what others wrote is shown, never obeyed). */
function print<T>(data: T, human: (d: T) => string) {
  writeOut(`${opts().json ? asJson(data) : human(data)}\n`);
}

const integer = (v: string) => {
  if (!/^-?\d+$/.test(v)) throw new InvalidArgumentError('a whole number');
  return Number(v);
};
/** A limit: a positive number, or `none` to remove it (the API checks the bounds and says what is wrong). */
const limit = (v: string): number | null => {
  if (v === 'none') return null;
  if (!/^\d+(\.\d+)?$/.test(v) || Number(v) <= 0) throw new InvalidArgumentError('a positive number, or none');
  return Number(v);
};
const time = (v: string) => {
  const d = /^\d+[smhd]$/.test(v) ? new Date(Date.now() - ms(v)) : new Date(v);
  if (Number.isNaN(d.getTime())) throw new InvalidArgumentError('an RFC 3339 time, or an age like 30m, 2h, 1d');
  return d.toISOString();
};
const UNIT_MS = { s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7 };
const ms = (v: string) => Number(v.slice(0, -1)) * UNIT_MS[v.slice(-1) as keyof typeof UNIT_MS];
const list = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
/** A repeatable `Name: value` option, collected into an object. */
const header = (v: string, into: Record<string, string> = {}) => {
  const colon = v.indexOf(':');
  if (colon <= 0) throw new InvalidArgumentError("'Name: value', like 'X-Team: plants'");
  return { ...into, [v.slice(0, colon).trim()]: v.slice(colon + 1).trim() };
};
const collect = (v: string, into: string[] = []) => [...into, v];
/** Secret headers from --secret-header (warned: the process list shows it) and --secret-header-file (one each). */
const secretHeaders = (o: { secretHeader?: Record<string, string>; secretHeaderFile?: string[] }) => {
  let out = o.secretHeader;
  if (out) readToken({ flag: 'secret-header', value: 'given' }); // only for its warning
  for (const file of o.secretHeaderFile ?? []) out = header(readToken({ flag: 'secret-header', file })!, out);
  return out;
};
const headerOptions = (c: Command) =>
  c
    .option('--header <name:value>', 'a header to send with each delivery (repeatable)', header)
    .option('--secret-header <name:value>', 'a secret one (never shown again): prefer the file', header)
    .option('--secret-header-file <path>', "a secret header, 'Name: value', read from this file (repeatable)", collect);
/** A page and where the next one starts. */
const pageOf = <Row extends object>(page: { items: Row[]; nextCursor: string | null }, cols: Column<Row>[]) =>
  `${table(page.items, cols)}${page.nextCursor ? `\n(more: --cursor ${page.nextCursor})` : ''}`;

/** A request as it went out: headers (the token hidden by the API), a blank line, the body. */
const exchange = (r: Schema<'SentRequest'>) =>
  `${
    r.headers
      ? Object.entries(r.headers)
          .map(([k, v]) => `${k}: ${v}`)
          .join('\n')
      : '(not sent yet)'
  }\n\n${r.body}`;

const SUBSCRIPTION_COLUMNS: Column<Schema<'Subscription'>>[] = [
  ['id', 'ID', 36],
  ['url', 'URL', 50],
  ['kind', 'KIND'],
  ['enabled', 'ENABLED'],
  ['disabledReason', 'DISABLED BECAUSE', 30],
  ['pausedUntil', 'PAUSED UNTIL', 24],
  ['filter', 'FILTER', 40],
  ['eventTypes', 'EVENT TYPES', 40],
  ['description', 'DESCRIPTION', 30],
];
const DELIVERY_COLUMNS: Column<Schema<'Delivery'>>[] = [
  ['id', 'ID', 36],
  ['subscriptionId', 'SUBSCRIPTION', 36],
  ['eventType', 'TYPE', 28],
  ['plantId', 'PLANT'],
  ['status', 'STATUS'],
  ['attempts', 'ATTEMPTS'],
  ['nextAttemptAt', 'NEXT ATTEMPT', 24],
  ['createdAt', 'CREATED', 24],
];
const ATTEMPT_COLUMNS: Column<Schema<'DeliveryAttempt'>>[] = [
  ['attemptedAt', 'AT', 24],
  ['status', 'STATUS'],
  ['latencyMs', 'MS'],
  ['error', 'ERROR', 40],
  ['responseBody', 'RESPONSE', 40],
];
const DEAD_LETTER_COLUMNS: Column<Schema<'DeadLetter'>>[] = [
  ['id', 'ID'],
  ['status', 'STATUS'],
  ['deadLetteredAt', 'AT', 24],
  ['key', 'KEY', 20],
  ['origin.topic', 'TOPIC', 20],
  ['origin.partition', 'PART'],
  ['origin.offset', 'OFFSET'],
  ['reason', 'REASON', 60],
];
const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] satisfies Query<'listDeliveries'>['status'][];
const DEAD_LETTER_STATUSES = [
  'dead',
  'redriving',
  'redriven',
  'discarded',
] satisfies Query<'listDeadLetters'>['status'][];

// subscriptions
const subscriptions = program
  .command('subscriptions')
  .alias('subs')
  .description('list, show, create, limit, rotate, test, disable, headers');
subscriptions
  .command('list')
  .description('every subscription')
  .action(async () => print(await admin()((c) => c.GET('/subscriptions')), (d) => table(d, SUBSCRIPTION_COLUMNS)));
headerOptions(
  subscriptions
    .command('create')
    .description(
      "subscribe a URL to New Plant webhooks, or with --operational to Plant Store's own events (the signing " +
        'secret is shown once)',
    )
    .argument('<url>', 'where to send them')
    .option('--subscriber-token-file <path>', 'a token to send it as Authorization: Bearer, read from this file')
    .option('--subscriber-token <token>', 'the token itself: shown in the process list, prefer the file')
    .option('--description <text>')
    .option('--asymmetric', 'sign with Ed25519 (v1a) instead of a shared secret')
    .option('--tags <tags>', 'only plants with one of these tags (comma-separated)', list)
    .option('--min-id <id>', 'only plant ids from this one', integer)
    .option('--max-id <id>', 'only plant ids up to this one', integer)
    .option('--operational', `operational events instead of plants: ${OPERATIONAL_EVENT_TYPES.join(', ')}`)
    .option('--event-types <types>', 'with --operational: only these event types (comma-separated; default all)', list)
    .option(
      '--max-per-second <n>',
      'at most n deliveries a second to it, across worker replicas (0.5: one every 2 s)',
      limit,
    )
    .option('--max-concurrency <n>', 'at most n requests to it at once, across worker replicas', limit),
).action(
  async (
    url: string,
    o: {
      operational?: boolean;
      eventTypes?: string[];
      subscriberTokenFile?: string;
      subscriberToken?: string;
      description?: string;
      asymmetric?: boolean;
      tags?: string[];
      minId?: number;
      maxId?: number;
      maxPerSecond?: number | null;
      maxConcurrency?: number | null;
      header?: Record<string, string>;
      secretHeader?: Record<string, string>;
      secretHeaderFile?: string[];
    },
  ) => {
    const range = o.minId !== undefined || o.maxId !== undefined ? { min: o.minId, max: o.maxId } : undefined;
    const filter =
      o.tags || range ? { ...(o.tags ? { tags: o.tags } : {}), ...(range ? { plantIds: range } : {}) } : undefined;
    const api = admin();
    const body: Schema<'SubscriptionCreate'> = {
      url,
      token: readToken({ flag: 'subscriber-token', value: o.subscriberToken, file: o.subscriberTokenFile }),
      description: o.description,
      signature: o.asymmetric ? 'asymmetric' : undefined,
      filter,
      // Checked by the API (422 naming the field), as every other value here.
      kind: o.operational ? 'operational' : undefined,
      eventTypes: o.eventTypes as Schema<'SubscriptionCreate'>['eventTypes'],
      maxDeliveriesPerSecond: o.maxPerSecond ?? undefined,
      maxConcurrency: o.maxConcurrency ?? undefined,
      headers: o.header,
      secretHeaders: secretHeaders(o),
    };
    const created = await api((c) => c.POST('/subscriptions', { body }));
    print(
      created,
      (d) =>
        `${details(d)}\n\n${d.secret ? 'Keep the secret now: it is not shown again.' : 'Receivers verify v1a signatures with the publicKey above.'}`,
    );
  },
);
headerOptions(
  subscriptions
    .command('headers')
    .description('set or remove the headers sent with each delivery (the others stay)')
    .argument('<id>')
    .option('--remove <name>', 'remove this header, plain or secret (repeatable)', collect),
).action(
  async (
    id: string,
    o: {
      header?: Record<string, string>;
      secretHeader?: Record<string, string>;
      secretHeaderFile?: string[];
      remove?: string[];
    },
  ) => {
    const removed = Object.fromEntries((o.remove ?? []).map((n) => [n, null]));
    const body: Schema<'SubscriptionUpdate'> = { headers: { ...removed, ...o.header } };
    const secret = secretHeaders(o);
    if (secret) body.secretHeaders = secret;
    print(await admin()((c) => c.PATCH('/subscriptions/{id}', { params: { path: { id } }, body })), (d) => details(d));
  },
);
subscriptions
  .command('rotate')
  .description('a new signing secret (the old one keeps signing beside it for 24 h)')
  .argument('<id>')
  .action(async (id: string) =>
    print(await admin()((c) => c.POST('/subscriptions/{id}/rotate-secret', { params: { path: { id } } })), (d) =>
      details(d),
    ),
  );
subscriptions
  .command('test')
  .description(
    'send it a signed test New Plant (an example event to an operational one) now and show what came back ' +
      '(exit 1 unless it answered 2xx)',
  )
  .argument('<id>')
  .option('--event-type <type>', 'operational: the event type to send an example of (default: the first it takes)')
  .option('--plant <json>', 'the plant to send, as JSON (default: a sample plant)', (v): Schema<'NewPlant'> => {
    try {
      // Whatever it holds, the API checks it against the schema and says what is wrong.
      return JSON.parse(v);
    } catch {
      throw new InvalidArgumentError('a JSON object, like \'{"id": 1, "name": "Fern"}\'');
    }
  })
  .action(async (id: string, o: { plant?: Schema<'NewPlant'>; eventType?: string }) => {
    const body: Schema<'SubscriptionTest'> = {
      ...(o.plant ? { plant: o.plant } : {}),
      ...(o.eventType ? { eventType: o.eventType as Schema<'SubscriptionTest'>['eventType'] } : {}),
    };
    const r = await admin()((c) => c.POST('/subscriptions/{id}/test', { params: { path: { id } }, body }));
    print(r, (d) => {
      const res = d.response;
      const answer = res.status !== null ? `HTTP ${res.status}` : `no answer: ${res.error}`;
      return `${exchange(d.request)}\n\n${answer} after ${res.latencyMs} ms${res.body ? `\n${res.body}` : ''}`;
    });
    if (!r.succeeded) process.exitCode = EXIT.refused;
  });
subscriptions
  .command('disable')
  .description('stop sending to it (--enable to resume)')
  .argument('<id>')
  .option('--enable', 'enable it again instead')
  .action(async (id: string, o: { enable?: boolean }) =>
    print(
      await admin()((c) =>
        c.PATCH('/subscriptions/{id}', { params: { path: { id } }, body: { enabled: Boolean(o.enable) } }),
      ),
      (d) => details(d),
    ),
  );

subscriptions
  .command('show')
  .description('one subscription: its settings, limits, pause and circuit breaker')
  .argument('<id>')
  .action(async (id: string) =>
    print(await admin()((c) => c.GET('/subscriptions/{id}', { params: { path: { id } } })), (d) => details(d)),
  );
subscriptions
  .command('limit')
  .description(
    "set or remove its flow control: the rate and the requests at once it gets (see its circuit with 'show')",
  )
  .argument('<id>')
  .option('--max-per-second <n|none>', 'at most n deliveries a second, across worker replicas; none: no limit', limit)
  .option('--max-concurrency <n|none>', 'at most n requests at once, across worker replicas; none: no limit', limit)
  .action(async (id: string, o: { maxPerSecond?: number | null; maxConcurrency?: number | null }) => {
    if (o.maxPerSecond === undefined && o.maxConcurrency === undefined)
      throw new InvalidArgumentError('give --max-per-second, --max-concurrency or both');
    const body: Schema<'SubscriptionUpdate'> = {
      ...(o.maxPerSecond !== undefined ? { maxDeliveriesPerSecond: o.maxPerSecond } : {}),
      ...(o.maxConcurrency !== undefined ? { maxConcurrency: o.maxConcurrency } : {}),
    };
    print(await admin()((c) => c.PATCH('/subscriptions/{id}', { params: { path: { id } }, body })), (d) => details(d));
  });
const PORTAL_LINK_COLUMNS: Column<Schema<'PortalLink'>>[] = [
  ['id', 'ID', 36],
  ['state', 'STATE'],
  ['expiresAt', 'EXPIRES', 24],
  ['lastUsedAt', 'LAST USED', 24],
  ['createdBy', 'BY', 20],
  ['description', 'DESCRIPTION', 30],
];
const portalLinks = subscriptions
  .command('portal-link')
  .description("a subscriber's own page for one subscription: create, list, revoke");
portalLinks
  .command('create')
  .description('a link that opens the console for this subscription alone (shown once)')
  .argument('<subscription-id>')
  .option('--lifetime <age>', 'how long it works: 1m to 30d (default 7d)', (v) => {
    if (!/^\d+[smhd]$/.test(v)) throw new InvalidArgumentError('an age like 30m, 12h, 7d');
    return Math.round(ms(v) / 1000);
  })
  .option('--description <text>', 'who it is for')
  .action(async (id: string, o: { lifetime?: number; description?: string }) =>
    print(
      await admin()((c) =>
        c.POST('/subscriptions/{id}/portal-links', {
          params: { path: { id } },
          body: { lifetimeSeconds: o.lifetime, description: o.description },
        }),
      ),
      (d) =>
        `${details(d)}\n\nSend the subscriber the url: it is shown this once, and anyone holding it sees and manages ` +
        `this subscription until ${d.expiresAt} (revoke it with: subscriptions portal-link revoke ${id} ${d.id}).`,
    ),
  );
portalLinks
  .command('list')
  .description("a subscription's links, revoked and expired ones too (never their tokens)")
  .argument('<subscription-id>')
  .action(async (id: string) =>
    print(await admin()((c) => c.GET('/subscriptions/{id}/portal-links', { params: { path: { id } } })), (d) =>
      table(d, PORTAL_LINK_COLUMNS),
    ),
  );
portalLinks
  .command('revoke')
  .description('refuse the link from now on')
  .argument('<subscription-id>')
  .argument('<link-id>')
  .action(async (id: string, linkId: string) =>
    print(
      await admin()((c) => c.DELETE('/subscriptions/{id}/portal-links/{linkId}', { params: { path: { id, linkId } } })),
      (d) => details(d),
    ),
  );

// backfills
const BACKFILL_COLUMNS: Column<Schema<'Backfill'>>[] = [
  ['id', 'ID', 36],
  ['state', 'STATE'],
  ['total', 'TOTAL'],
  ['sent', 'SENT'],
  ['pending', 'PENDING'],
  ['superseded', 'SUPERSEDED'],
  ['since', 'SINCE', 24],
  ['createdAt', 'CREATED', 24],
];
/** `sent of total` with a bar, for a terminal. */
const progress = (b: Schema<'Backfill'>) => {
  const done = b.total === 0 ? 1 : Math.min(1, b.sent / b.total);
  return `${details(b)}\n\n[${'#'.repeat(Math.round(done * 30)).padEnd(30, '.')}] ${b.sent} of ${b.total} sent, ${b.state}`;
};
const backfills = program
  .command('backfills')
  .description('send a subscriber the current state of every plant it would receive: start, list, show, cancel');
backfills
  .command('start')
  .description('plant-id order, marked plant-store-backfill, at --rate per second (one per subscription at a time)')
  .argument('<subscription>')
  .option('--since <time>', 'only plants changed since (RFC 3339, or an age: 30m, 2h, 1d)', time)
  .option('--rate <n>', 'deliveries per second, 1 to 1000 (default 50)', integer)
  .action(async (id: string, o: { since?: string; rate?: number }) =>
    print(
      await admin()((c) =>
        c.POST('/subscriptions/{id}/backfills', {
          params: { path: { id } },
          body: { since: o.since, ratePerSecond: o.rate },
        }),
      ),
      progress,
    ),
  );
backfills
  .command('list')
  .description("a subscription's backfills, newest first")
  .argument('<subscription>')
  .action(async (id: string) =>
    print(await admin()((c) => c.GET('/subscriptions/{id}/backfills', { params: { path: { id } } })), (d) =>
      table(d, BACKFILL_COLUMNS),
    ),
  );
backfills
  .command('show')
  .description('one backfill and its progress')
  .argument('<subscription>')
  .argument('<backfill>')
  .action(async (id: string, backfillId: string) =>
    print(
      await admin()((c) =>
        c.GET('/subscriptions/{id}/backfills/{backfillId}', { params: { path: { id, backfillId } } }),
      ),
      progress,
    ),
  );
backfills
  .command('cancel')
  .description('stop it: nothing more is sent (those in flight finish)')
  .argument('<subscription>')
  .argument('<backfill>')
  .action(async (id: string, backfillId: string) =>
    print(
      await admin()((c) =>
        c.POST('/subscriptions/{id}/backfills/{backfillId}/cancel', { params: { path: { id, backfillId } } }),
      ),
      progress,
    ),
  );

// deliveries
const deliveries = program.command('deliveries').description('list, show, retry, recover');
deliveries
  .command('list')
  .description('newest first')
  .option('--subscription <id>')
  .addOption(new Option('--status <status>').choices(DELIVERY_STATUSES))
  .option('--plant <id>', 'plant id', integer)
  .option('--since <time>', 'created at or after (RFC 3339, or an age: 30m, 2h, 1d)', time)
  .option('--until <time>', 'created before', time)
  .option('--limit <n>', '1 to 500', integer)
  .option('--cursor <cursor>', 'the next page, as the previous one said')
  .action(
    async (o: {
      subscription?: string;
      status?: Query<'listDeliveries'>['status'];
      plant?: number;
      since?: string;
      until?: string;
      limit?: number;
      cursor?: string;
    }) =>
      print(
        await admin()((c) =>
          c.GET('/deliveries', {
            params: {
              query: {
                subscriptionId: o.subscription,
                status: o.status,
                plantId: o.plant,
                since: o.since,
                until: o.until,
                limit: o.limit,
                cursor: o.cursor,
              },
            },
          }),
        ),
        (d) => pageOf(d, DELIVERY_COLUMNS),
      ),
  );
deliveries
  .command('show')
  .description('a delivery with every attempt')
  .argument('<id>')
  .action(async (id: string) =>
    print(await admin()((c) => c.GET('/deliveries/{id}', { params: { path: { id } } })), (d) => {
      const { attemptLog, request, ...delivery } = d;
      return `${details(delivery)}\n\n${exchange(request)}\n\n${table(attemptLog, ATTEMPT_COLUMNS)}`;
    }),
  );
deliveries
  .command('retry')
  .description('send a failed delivery again now')
  .argument('<id>')
  .action(async (id: string) =>
    print(await admin()((c) => c.POST('/deliveries/{id}/retry', { params: { path: { id } } })), (d) => details(d)),
  );
deliveries
  .command('recover')
  .description(
    'send every failed delivery again: of a subscription, a plant, a time range (at least one); with --all, every ' +
      'delivery of a subscription since a time, those that succeeded too',
  )
  .option('--subscription <id>')
  .option('--plant <id>', 'plant id', integer)
  .requiredOption('--since <time>', 'created at or after (RFC 3339, or an age: 30m, 2h, 1d)', time)
  .option('--until <time>', 'created before', time)
  .option(
    '--all',
    'every New Plant delivery of --subscription whose event is at or after --since, not only the failed ones ' +
      '(the same webhook-id; a plant whose newer version went meanwhile is not sent an older one)',
  )
  .action(async (o: { subscription?: string; plant?: number; since: string; until?: string; all?: boolean }) => {
    if (!o.all)
      return print(
        await admin()((c) =>
          c.POST('/deliveries/retry', {
            body: { subscriptionId: o.subscription, plantId: o.plant, since: o.since, until: o.until },
          }),
        ),
        (d) => `${d.requeued} failed deliveries re-queued`,
      );
    if (!o.subscription || o.plant !== undefined || o.until !== undefined)
      program.error(
        'plant-store: --all replays one subscription since a time: give --subscription, not --plant or --until',
        {
          exitCode: EXIT.usage,
          code: 'commander.usage',
        },
      );
    // The API bounds each call (see recoverSubscription): go on with its cursor until it is complete.
    let requeued = 0;
    let cursor: string | undefined;
    for (;;) {
      const d = await admin()((c) =>
        c.POST('/subscriptions/{id}/recover', {
          params: { path: { id: o.subscription! }, query: { since: o.since, status: 'all', cursor } },
        }),
      );
      requeued += d.requeued;
      if (d.complete || !d.cursor) return print({ ...d, requeued }, () => `${requeued} deliveries re-queued`);
      if (!opts().json) writeErr(`${requeued} deliveries re-queued so far, going on\n`);
      cursor = d.cursor;
    }
  });

// dead letters
const deadLetters = program.command('dead-letters').alias('dlq').description('list, show, redrive, discard');
deadLetters
  .command('list')
  .description('newest first')
  .addOption(new Option('--status <status>').choices(DEAD_LETTER_STATUSES))
  .option('--limit <n>', '1 to 500', integer)
  .option('--cursor <cursor>')
  .action(async (o: { status?: Query<'listDeadLetters'>['status']; limit?: number; cursor?: string }) =>
    print(
      await admin()((c) =>
        c.GET('/dead-letters', { params: { query: { status: o.status, limit: o.limit, cursor: o.cursor } } }),
      ),
      (d) => pageOf(d, DEAD_LETTER_COLUMNS),
    ),
  );
deadLetters
  .command('show')
  .description('a dead letter with its original value and headers')
  .argument('<id>')
  .action(async (id: string) =>
    print(await admin()((c) => c.GET('/dead-letters/{id}', { params: { path: { id } } })), (d) => details(d)),
  );
for (const [name, verb] of [
  ['redrive', 'republish to plant.created (after fixing the cause)'],
  ['discard', 'mark discarded'],
] as const)
  deadLetters
    .command(name)
    .description(`${verb}: one or many`)
    .argument('<ids...>')
    .action(async (ids: string[]) => {
      const result = await admin()((c) => c.POST(`/dead-letters/${name}`, { body: { ids } }));
      print(result, (d) =>
        [
          `${name === 'redrive' ? 'redriven' : 'discarded'}: ${d.done.join(', ') || 'none'}`,
          ...d.skipped.map((s) => `left as it was: ${s.id} (${s.status})`),
        ].join('\n'),
      );
      if (result.done.length < ids.length) process.exitCode = EXIT.refused;
    });

// send
program
  .command('send')
  .description('post a New Plant webhook (with PLANT_STORE_WEBHOOK_TOKEN), as a sender would')
  .option('--webhook-token-file <path>', 'read the webhook token from this file (else PLANT_STORE_WEBHOOK_TOKEN)')
  .option('--webhook-token <token>', 'the token itself: shown in the process list, prefer the file or variable')
  .option('--id <id>', 'plant id (default: a random one)', integer)
  .option('--name <name>', 'plant name', 'Test plant')
  .option('--tag <tag>')
  .option('--webhook-id <key>', 'idempotency key (default: a new one, so a resend is a new webhook)')
  .action(
    async (o: {
      webhookTokenFile?: string;
      webhookToken?: string;
      id?: number;
      name: string;
      tag?: string;
      webhookId?: string;
    }) => {
      const token = readToken({
        flag: 'webhook-token',
        value: o.webhookToken,
        file: o.webhookTokenFile,
        variable: 'PLANT_STORE_WEBHOOK_TOKEN',
      });
      const plant: Schema<'NewPlant'> = {
        id: o.id ?? Math.floor(Math.random() * 1e9) + 1,
        name: o.name,
        ...(o.tag ? { tag: o.tag } : {}),
      };
      const key = o.webhookId ?? `msg_${randomUUID()}`;
      const res = await postWebhook({ url: opts().url, token, tokenVariable: 'PLANT_STORE_WEBHOOK_TOKEN' }, plant, {
        'webhook-id': key,
      });
      // The webhook's answer is not in the document (a sender needs only the 200): shown as the gateway sent it.
      print(
        { ...res, plant, webhookId: key },
        () => `accepted plant ${plant.id} as event ${res.eventId} (webhook-id ${key})`,
      );
    },
  );

async function main() {
  try {
    await program.parseAsync(process.argv);
  } catch (err) {
    if (err instanceof ApiError) {
      writeErr(`plant-store: ${err.message}\n`);
      if (opts().json && err.problem) writeOut(`${asJson(err.problem)}\n`);
      process.exitCode = err.exitCode;
      return;
    }
    const e = err as { code?: string; exitCode?: number; message: string };
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) {
      // --help and --version are not failures; every other complaint of the parser is a usage error.
      process.exitCode = e.code === 'commander.helpDisplayed' || e.code === 'commander.version' ? 0 : EXIT.usage;
      return;
    }
    writeErr(`plant-store: ${e.message}\n`);
    process.exitCode = EXIT.unavailable;
  }
}

void main();
