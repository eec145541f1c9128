import { createHash } from 'node:crypto';
import { z } from 'zod';
import { parseDuration } from './duration';
import { GENERATE_TOKEN_HINT, knownExampleReason } from './known-examples';
import { checkKafkaEnv, kafkaEnv } from './kafka-env';
import { readDatabaseUrl } from './database-url';

// Every environment variable the two apps read, with its default. The README's table, the compose file and
// the Kubernetes ConfigMap are checked against these shapes by tests, so this file is the single list.

const csv = z.string().transform((s) =>
  s
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean),
);

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const duration = (example: string) =>
  z.string().transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === null) ctx.addIssue({ code: 'custom', message: `a duration like ${example}` });
    return ms ?? 0;
  });

/** A 32-byte key in base64, as `openssl rand -base64 32` prints it. */
const KEY_HINT = '32 random bytes in base64 (for example from `openssl rand -base64 32`)';
const isKey = (v: string) => /^[A-Za-z0-9+/]{43}=$/.test(v) && Buffer.from(v, 'base64').length === 32;
const key = z
  .string()
  .refine(isKey, `must be ${KEY_HINT}`)
  .superRefine((v, ctx) => {
    const why = knownExampleReason(v);
    if (why) ctx.addIssue({ code: 'custom', message: `${why}: anyone can read it. Use ${KEY_HINT}` });
  });

/** Refuses the tokens everyone has seen (see known-examples.ts), naming the entry but never showing a value. */
const refuseExampleToken = (token: string, which: string, ctx: z.RefinementCtx) => {
  const why = knownExampleReason(token);
  if (why)
    ctx.addIssue({
      code: 'custom',
      message: `${which} ${why}: anyone can read it. Replace it: ${GENERATE_TOKEN_HINT}`,
    });
};

export type AdminScope = 'read' | 'write';
export interface AdminToken {
  /** Who it is in the audit trail: the name given, else `token-` and 8 hex digits of its SHA-256. */
  name: string;
  scope: AdminScope;
  token: string;
}

/**
 * ADMIN_TOKENS entries: `token` (scope write), `scope:token`, or `name:scope:token`. `read` lists and inspects;
 * `write` also changes (it includes read).
 */
const adminTokens = csv.transform((entries, ctx): AdminToken[] =>
  entries.map((entry) => {
    const parts = entry.split(':');
    const token = parts[parts.length - 1];
    const scope = parts.length >= 2 ? parts[parts.length - 2] : 'write';
    const name = parts.length >= 3 ? parts.slice(0, -2).join(':') : `token-${hash8(token)}`;
    if (scope !== 'read' && scope !== 'write')
      ctx.addIssue({ code: 'custom', message: `scope "${scope}" is neither read nor write (name:scope:token)` });
    if (token.length < 16) ctx.addIssue({ code: 'custom', message: 'each token needs at least 16 characters' });
    refuseExampleToken(token, `the token of "${name}"`, ctx);
    return { name, scope: scope as AdminScope, token };
  }),
);
const hash8 = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 8);

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();

/** A PostgreSQL URL whose TLS parameters (sslmode, sslrootcert, …) mean something we can do (database-url.ts). */
const databaseUrl = z
  .string()
  .url()
  .superRefine((url, ctx) => {
    for (const message of readDatabaseUrl(url).problems) ctx.addIssue({ code: 'custom', message });
  });

/**
 * The client-side bound must outlast the server's: normally PostgreSQL cancels a slow statement itself (and the
 * connection stays usable); the client's bound is for a server that answers nothing at all.
 */
function checkDatabaseBounds(
  c: { DATABASE_STATEMENT_TIMEOUT_MS: number; DATABASE_QUERY_TIMEOUT_MS: number },
  ctx: z.RefinementCtx,
) {
  if (c.DATABASE_QUERY_TIMEOUT_MS <= c.DATABASE_STATEMENT_TIMEOUT_MS)
    ctx.addIssue({
      code: 'custom',
      path: ['DATABASE_QUERY_TIMEOUT_MS'],
      message: `must be longer than DATABASE_STATEMENT_TIMEOUT_MS (${c.DATABASE_STATEMENT_TIMEOUT_MS})`,
    });
}

export const sharedEnv = {
  // Brokers, TLS, SASL and topics: libs/config/src/kafka-env.ts.
  ...kafkaEnv,
  DATABASE_URL: databaseUrl.default('postgresql://plantstore:plantstore@127.0.0.1:5432/plantstore'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // json for log collectors; pretty (coloured, one line each) for a terminal: `npm start` sets it.
  LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
  // How often each app logs a one-line summary of what flowed through it (only when something did); 0: never.
  LOG_SUMMARY_MS: z.coerce.number().int().min(0).default(10000),
  // OpenTelemetry: spans go by OTLP/HTTP to <endpoint>/v1/traces when set; unset, tracing is off (no spans kept).
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  DATABASE_POOL_SIZE: positiveInt.default(10),
  // Every query is bounded (docs/database.md): PostgreSQL cancels a statement after the first; the client gives up
  // on a server that answers nothing (frozen, cut off) after the second and drops that connection.
  DATABASE_STATEMENT_TIMEOUT_MS: positiveInt.default(10000),
  DATABASE_QUERY_TIMEOUT_MS: positiveInt.default(15000),
  // Opening a connection, and waiting for a free one in the pool.
  DATABASE_CONNECT_TIMEOUT_MS: positiveInt.default(5000),
  // TCP keep-alive on every connection, probing after this much silence (0: off): a peer gone without a word.
  DATABASE_KEEPALIVE_MS: z.coerce.number().int().min(0).default(10000),
  // Seals subscriber secrets and tokens at rest (libs/persistence/src/secrets). Required: without it nothing
  // stored could be opened, and a made-up default would be a key everyone knows.
  SECRETS_KEY: z.string({ error: `is required: ${KEY_HINT}; \`npm start\` makes one in .local/` }).pipe(key),
  SECRETS_PREVIOUS_KEYS: csv.default([]).pipe(z.array(key)),
  // The worker consumes with it; the gateway reads its lag for GET /overview.
  WORKER_GROUP_ID: z.string().min(1).default('plant-store-worker'),
  // One delivery attempt; the gateway's test send (POST /subscriptions/{id}/test) waits as long.
  DELIVERY_TIMEOUT_MS: positiveInt.default(15000),
  // Connections to subscribers' brokers (docs/destinations.md) one process keeps open at most, and how long an
  // unused one stays open. Past the bound a delivery to yet another broker is an attempt with an error, retried.
  DESTINATION_MAX_CONNECTIONS: positiveInt.max(10000).default(64),
  DESTINATION_IDLE_MS: positiveInt.default(300000),
};

export const gatewayEnvSchema = z
  .object({
    ...sharedEnv,
    PORT: port.default(3000),
    HOST: z.string().default('0.0.0.0'),
    WEBHOOK_TOKENS: csv.pipe(
      z
        .array(z.string().min(16, 'each token needs at least 16 characters'))
        .min(1)
        .superRefine((tokens, ctx) => tokens.forEach((t, i) => refuseExampleToken(t, `token ${i + 1}`, ctx))),
    ),
    ADMIN_TOKENS: adminTokens.default([]),
    WEBHOOK_MAX_BYTES: positiveInt.default(65536),
    PUBLISH_TIMEOUT_MS: positiveInt.default(5000),
    EVENT_SOURCE: z.string().min(1).default('/plant-store/gateway'),
    SHUTDOWN_DRAIN_MS: positiveInt.default(10000),
    SHUTDOWN_IDLE_WAIT_MS: z.coerce.number().int().min(0).default(3000),
    DELIVERY_ALLOW_PRIVATE_NETWORKS: bool.default(false),
    MAX_PUBLISHES_IN_FLIGHT: positiveInt.default(1000),
    HTTP_HEADERS_TIMEOUT_MS: positiveInt.default(10000),
    HTTP_REQUEST_TIMEOUT_MS: positiveInt.default(30000),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: positiveInt.default(72000),
    HTTP_MAX_CONNECTIONS: positiveInt.default(4096),
    HTTP_MAX_CONCURRENT_DECODES: positiveInt.default(8),
    // Bytes of request bodies held while they are read, for the whole process and for one sender (a bearer
    // credential): off the V8 heap, beside the ~110 MB a gateway holds idle, within a 150 MB resident set.
    HTTP_BODY_BUDGET_BYTES: positiveInt.default(16 * 1024 * 1024),
    HTTP_BODY_SENDER_SHARE_BYTES: positiveInt.default(4 * 1024 * 1024),
    // Shares per subscriber (issue 36). A test send waits up to DELIVERY_TIMEOUT_MS on its receiver: one
    // subscription holds at most this many of the gateway's 16 at once (429 past it), so a slow receiver cannot
    // take the others' tests.
    TEST_SENDS_PER_SUBSCRIPTION: positiveInt.max(16, 'at most 16, the test sends one gateway makes at once').default(2),
    // What a portal link calls that is not a read (a change, a test send, a rotation, a retry, a replay): a token
    // bucket per link in each gateway (429 past it). A change makes every worker reload; admin tokens are not limited.
    PORTAL_LINK_CHANGES_PER_MINUTE: positiveInt.default(30),
    PORTAL_LINK_CHANGES_BURST: positiveInt.default(10),
    // Replays (recover) a subscription's portal links may start in 24 hours, together; admin tokens are not counted.
    PORTAL_LINK_REPLAYS_PER_DAY: positiveInt.default(10),
    // And at most one in this long (0s: no such pace): each re-queues up to 5,000 deliveries, sent again.
    PORTAL_LINK_REPLAY_INTERVAL: duration('30s').prefault('30s'),
    METRICS_PORT: port.default(9465),
    METRICS_HOST: z.string().default('0.0.0.0'),
  })
  .superRefine((c, ctx) => {
    checkKafkaEnv(c, ctx);
    checkDatabaseBounds(c, ctx);
    checkBodyBudget(c, ctx);
  });

/** A sender's share fits in the budget, and holds at least one body of the largest size, or none could be read. */
function checkBodyBudget(
  c: { WEBHOOK_MAX_BYTES: number; HTTP_BODY_BUDGET_BYTES: number; HTTP_BODY_SENDER_SHARE_BYTES: number },
  ctx: z.RefinementCtx,
) {
  const share = c.HTTP_BODY_SENDER_SHARE_BYTES;
  if (share > c.HTTP_BODY_BUDGET_BYTES)
    ctx.addIssue({
      code: 'custom',
      path: ['HTTP_BODY_SENDER_SHARE_BYTES'],
      message: `must be at most HTTP_BODY_BUDGET_BYTES (${c.HTTP_BODY_BUDGET_BYTES})`,
    });
  if (share < c.WEBHOOK_MAX_BYTES)
    ctx.addIssue({
      code: 'custom',
      path: ['HTTP_BODY_SENDER_SHARE_BYTES'],
      message: `must be at least WEBHOOK_MAX_BYTES (${c.WEBHOOK_MAX_BYTES}), or a body of that size could never be read`,
    });
}

export const workerEnvSchema = z
  .object({
    ...sharedEnv,
    WORKER_METRICS_PORT: port.default(9464),
    // Loopback unless told: outside a container nothing else needs /metrics. Images and manifests set 0.0.0.0,
    // where the container's own network is the boundary and probes and Prometheus come from outside it.
    WORKER_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
    WORKER_MAX_BATCH_BYTES: positiveInt.default(1048576),
    // A Kafka consumer that shows no sign of life this long (no fetch, heartbeat or batch; out of its group; an
    // owned partition with lag left unconsumed) is judged stuck: readiness fails, it rejoins with a new consumer.
    // Above DATABASE_QUERY_TIMEOUT_MS: a batch waiting on one query heartbeats only between queries.
    KAFKA_CONSUMER_STALL_MS: positiveInt.min(5000).default(30000),
    DELIVERY_RETRY_SCHEDULE: z
      .string()
      .regex(
        /^\s*\d+(\.\d+)?(ms|s|m|h|d)?\s*(,\s*\d+(\.\d+)?(ms|s|m|h|d)?\s*)*$/,
        'comma-separated durations like 0s,5s,5m,2h',
      )
      .default('0s,5s,5m,30m,2h,5h,10h,10h'),
    DELIVERY_ALLOW_PRIVATE_NETWORKS: bool.default(false),
    DELIVERY_CONCURRENCY: positiveInt.default(128),
    DELIVERY_CONCURRENCY_PER_SUBSCRIPTION: positiveInt.default(64),
    // Deliveries a worker holds (queued, on the wire, being recorded); unset: 8 × DELIVERY_CONCURRENCY.
    DELIVERY_WINDOW: positiveInt.optional(),
    DELIVERY_POLL_MS: positiveInt.default(1000),
    // How long a subscriber may stay full, answering little, before it is judged slow (its deliveries then rows).
    DELIVERY_HANDOVER_WAIT_MS: z.coerce.number().int().min(10).default(250),
    // Flow control and the circuit breaker per subscriber (docs/delivery.md).
    DELIVERY_PAUSE_MAX: duration('1h').prefault('1h'),
    DELIVERY_CIRCUIT_FAILURES: positiveInt.default(5),
    DELIVERY_CIRCUIT_PROBE_MIN: duration('10s').prefault('10s'),
    DELIVERY_CIRCUIT_PROBE_MAX: duration('10m').prefault('10m'),
    DELIVERY_DISABLE_AFTER: duration('5d').prefault('5d'),
    DELIVERY_PENDING_MAX: positiveInt.default(100_000),
    MAX_WEBHOOK_HOPS: positiveInt.default(10),
    SHUTDOWN_TIMEOUT_MS: positiveInt.default(25000),
    // Retention (apps/worker/src/retention): rows older than these windows are pruned in small batches.
    PROCESSED_EVENTS_RETENTION: duration('7d').prefault('7d'),
    DELIVERY_RETENTION: duration('30d').prefault('30d'),
    RETENTION_SWEEP_MS: positiveInt.default(60000),
    RETENTION_BATCH_SIZE: positiveInt.default(1000),
    // Retention's deletes, bounded apart from the general bound: a long backlog may make a batch slow.
    RETENTION_STATEMENT_TIMEOUT_MS: positiveInt.default(60000),
    // Migrations (and sealing credentials) run before the worker consumes, under their own bound and, if set,
    // as a role of their own: the running apps' DATABASE_URL role then needs no right to change the schema.
    DATABASE_MIGRATION_URL: databaseUrl.optional(),
    DATABASE_MIGRATION_TIMEOUT_MS: positiveInt.default(600000),
  })
  .superRefine((c, ctx) => {
    checkKafkaEnv(c, ctx);
    checkDatabaseBounds(c, ctx);
    if (c.DELIVERY_WINDOW !== undefined && c.DELIVERY_WINDOW < c.DELIVERY_CONCURRENCY)
      ctx.addIssue({
        code: 'custom',
        path: ['DELIVERY_WINDOW'],
        message: `must be at least DELIVERY_CONCURRENCY (${c.DELIVERY_CONCURRENCY}), or slots would stay idle`,
      });
    // A finished delivery must outlive the time its retries could take, or a recover would find nothing to send.
    const retries = c.DELIVERY_RETRY_SCHEDULE.split(',').reduce((sum, d) => sum + (parseDuration(d) ?? 0), 0);
    if (c.DELIVERY_RETENTION < retries)
      ctx.addIssue({
        code: 'custom',
        path: ['DELIVERY_RETENTION'],
        message: `must be at least the whole DELIVERY_RETRY_SCHEDULE (${Math.ceil(retries / 3_600_000)}h)`,
      });
  });

export type GatewayConfig = z.infer<typeof gatewayEnvSchema>;
export type WorkerConfig = z.infer<typeof workerEnvSchema>;

/** Names of every variable either app reads. */
export const allEnvKeys = (): string[] =>
  [...new Set([...Object.keys(gatewayEnvSchema.shape), ...Object.keys(workerEnvSchema.shape)])].sort();
