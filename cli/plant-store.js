#!/usr/bin/env node
// @ts-check
// `npx plant-store …`: the admin API from a terminal. PLANT_STORE_URL (default http://127.0.0.1:3000) and
// PLANT_STORE_ADMIN_TOKEN (or a file: PLANT_STORE_ADMIN_TOKEN_FILE, --admin-token-file); `send` uses
// PLANT_STORE_WEBHOOK_TOKEN (or its _FILE). Tokens on the command line warn (credentials.js). Tables by default,
// --json for scripts.
// Exit codes: 0 done, 1 the API refused (its reason printed), 2 a wrong command line, 3 unreachable or 5xx.
const { randomUUID } = require('node:crypto');
const { Command, InvalidArgumentError, Option } = require('commander');
const { client, ApiError, EXIT } = require('./api');
const { readToken } = require('./credentials');
const { table, details } = require('./table');

const program = new Command('plant-store')
  .description('Operate a Plant Store: subscriptions, deliveries, dead letters, and test webhooks')
  .addOption(new Option('--url <url>', 'the gateway').env('PLANT_STORE_URL').default('http://127.0.0.1:3000'))
  // The token: PLANT_STORE_ADMIN_TOKEN, or a file. The flag is kept for scripts that use it, with a warning.
  .option('--admin-token-file <path>', 'read the admin token (read or write scope) from this file (- for stdin)')
  .option('--admin-token <token>', 'the admin token itself: shown in the process list, prefer the file or variable')
  .option('--json', 'print JSON (for scripts) instead of tables')
  .showHelpAfterError('(add --help for usage)')
  .exitOverride();

const opts = () =>
  /** @type {{ url: string, adminToken?: string, adminTokenFile?: string, json?: boolean }} */ (program.opts());
const admin = () =>
  client({
    url: opts().url,
    token: readToken({
      flag: 'admin-token',
      value: opts().adminToken,
      file: opts().adminTokenFile,
      variable: 'PLANT_STORE_ADMIN_TOKEN',
    }),
    tokenVariable: 'PLANT_STORE_ADMIN_TOKEN',
  });

/** Prints the JSON, or the human form. @param {unknown} data @param {(d: any) => string} human */
function print(data, human) {
  process.stdout.write(`${opts().json ? JSON.stringify(data, null, 2) : human(data)}\n`);
}

/** @param {string} v */
const integer = (v) => {
  if (!/^-?\d+$/.test(v)) throw new InvalidArgumentError('a whole number');
  return Number(v);
};
/** @param {string} v */
const time = (v) => {
  const d = /^\d+[smhd]$/.test(v) ? new Date(Date.now() - ms(v)) : new Date(v);
  if (Number.isNaN(d.getTime())) throw new InvalidArgumentError('an RFC 3339 time, or an age like 30m, 2h, 1d');
  return d.toISOString();
};
/** @param {string} v */
const ms = (v) => Number(v.slice(0, -1)) * { s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7 }[v.slice(-1)];
/** @param {string} v */
const list = (v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
/** @param {Record<string, unknown>} q */
const query = (q) => {
  const s = new URLSearchParams(
    Object.entries(q).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)]])),
  ).toString();
  return s ? `?${s}` : '';
};
/** A page and where the next one starts. @param {{ items: Record<string, unknown>[], nextCursor: string | null }} page @param {[string, string, number?][]} cols */
const pageOf = (page, cols) =>
  `${table(page.items, cols)}${page.nextCursor ? `\n(more: --cursor ${page.nextCursor})` : ''}`;

/** A request as it went out: headers (the token hidden by the API), a blank line, the body. @param {{ headers: Record<string, string> | null, body: string }} r */
const exchange = (r) =>
  `${
    r.headers
      ? Object.entries(r.headers)
          .map(([k, v]) => `${k}: ${v}`)
          .join('\n')
      : '(not sent yet)'
  }\n\n${r.body}`;

const SUBSCRIPTION_COLUMNS = /** @type {[string, string, number?][]} */ ([
  ['id', 'ID', 36],
  ['url', 'URL', 50],
  ['enabled', 'ENABLED'],
  ['disabledReason', 'DISABLED BECAUSE', 30],
  ['filter', 'FILTER', 40],
  ['description', 'DESCRIPTION', 30],
]);
const DELIVERY_COLUMNS = /** @type {[string, string, number?][]} */ ([
  ['id', 'ID', 36],
  ['subscriptionId', 'SUBSCRIPTION', 36],
  ['plantId', 'PLANT'],
  ['status', 'STATUS'],
  ['attempts', 'ATTEMPTS'],
  ['nextAttemptAt', 'NEXT ATTEMPT', 24],
  ['createdAt', 'CREATED', 24],
]);
const DEAD_LETTER_COLUMNS = /** @type {[string, string, number?][]} */ ([
  ['id', 'ID'],
  ['status', 'STATUS'],
  ['deadLetteredAt', 'AT', 24],
  ['key', 'KEY', 20],
  ['origin.topic', 'TOPIC', 20],
  ['origin.partition', 'PART'],
  ['origin.offset', 'OFFSET'],
  ['reason', 'REASON', 60],
]);

// subscriptions
const subscriptions = program.command('subscriptions').alias('subs').description('list, create, rotate, test, disable');
subscriptions
  .command('list')
  .description('every subscription')
  .action(async () => print(await admin()('GET', '/subscriptions'), (d) => table(d, SUBSCRIPTION_COLUMNS)));
subscriptions
  .command('create')
  .description('subscribe a URL to New Plant webhooks (the signing secret is shown once)')
  .argument('<url>', 'where to send them')
  .option('--subscriber-token-file <path>', 'a token to send it as Authorization: Bearer, read from this file')
  .option('--subscriber-token <token>', 'the token itself: shown in the process list, prefer the file')
  .option('--description <text>')
  .option('--asymmetric', 'sign with Ed25519 (v1a) instead of a shared secret')
  .option('--tags <tags>', 'only plants with one of these tags (comma-separated)', list)
  .option('--min-id <id>', 'only plant ids from this one', integer)
  .option('--max-id <id>', 'only plant ids up to this one', integer)
  .action(async (url, o) => {
    const range = o.minId !== undefined || o.maxId !== undefined ? { min: o.minId, max: o.maxId } : undefined;
    const filter =
      o.tags || range ? { ...(o.tags ? { tags: o.tags } : {}), ...(range ? { plantIds: range } : {}) } : undefined;
    const created = await admin()('POST', '/subscriptions', {
      url,
      token: readToken({ flag: 'subscriber-token', value: o.subscriberToken, file: o.subscriberTokenFile }),
      description: o.description,
      signature: o.asymmetric ? 'asymmetric' : undefined,
      filter,
    });
    print(
      created,
      (d) =>
        `${details(d)}\n\n${d.secret ? 'Keep the secret now: it is not shown again.' : 'Receivers verify v1a signatures with the publicKey above.'}`,
    );
  });
subscriptions
  .command('rotate')
  .description('a new signing secret (the old one keeps signing beside it for 24 h)')
  .argument('<id>')
  .action(async (id) =>
    print(await admin()('POST', `/subscriptions/${encodeURIComponent(id)}/rotate-secret`), (d) => details(d)),
  );
subscriptions
  .command('test')
  .description('send it a signed test New Plant now and show what came back (exit 1 unless it answered 2xx)')
  .argument('<id>')
  .option('--plant <json>', 'the plant to send, as JSON (default: a sample plant)', (v) => {
    try {
      return JSON.parse(v);
    } catch {
      throw new InvalidArgumentError('a JSON object, like \'{"id": 1, "name": "Fern"}\'');
    }
  })
  .action(async (id, o) => {
    const r = await admin()('POST', `/subscriptions/${encodeURIComponent(id)}/test`, o.plant ? { plant: o.plant } : {});
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
  .action(async (id, o) =>
    print(await admin()('PATCH', `/subscriptions/${encodeURIComponent(id)}`, { enabled: Boolean(o.enable) }), (d) =>
      details(d),
    ),
  );

// deliveries
const deliveries = program.command('deliveries').description('list, show, retry, recover');
deliveries
  .command('list')
  .description('newest first')
  .option('--subscription <id>')
  .addOption(new Option('--status <status>').choices(['pending', 'succeeded', 'failed']))
  .option('--plant <id>', 'plant id', integer)
  .option('--since <time>', 'created at or after (RFC 3339, or an age: 30m, 2h, 1d)', time)
  .option('--until <time>', 'created before', time)
  .option('--limit <n>', '1 to 500', integer)
  .option('--cursor <cursor>', 'the next page, as the previous one said')
  .action(async (o) =>
    print(
      await admin()(
        'GET',
        `/deliveries${query({ subscriptionId: o.subscription, status: o.status, plantId: o.plant, since: o.since, until: o.until, limit: o.limit, cursor: o.cursor })}`,
      ),
      (d) => pageOf(d, DELIVERY_COLUMNS),
    ),
  );
deliveries
  .command('show')
  .description('a delivery with every attempt')
  .argument('<id>')
  .action(async (id) =>
    print(await admin()('GET', `/deliveries/${encodeURIComponent(id)}`), (d) => {
      const { attemptLog, request, ...delivery } = d;
      return `${details(delivery)}\n\n${exchange(request)}\n\n${table(attemptLog, [
        ['attemptedAt', 'AT', 24],
        ['status', 'STATUS'],
        ['latencyMs', 'MS'],
        ['error', 'ERROR', 40],
        ['responseBody', 'RESPONSE', 40],
      ])}`;
    }),
  );
deliveries
  .command('retry')
  .description('send a failed delivery again now')
  .argument('<id>')
  .action(async (id) => print(await admin()('POST', `/deliveries/${encodeURIComponent(id)}/retry`), (d) => details(d)));
deliveries
  .command('recover')
  .description('send every failed delivery again: of a subscription, a plant, a time range (at least one)')
  .option('--subscription <id>')
  .option('--plant <id>', 'plant id', integer)
  .requiredOption('--since <time>', 'created at or after (RFC 3339, or an age: 30m, 2h, 1d)', time)
  .option('--until <time>', 'created before', time)
  .action(async (o) =>
    print(
      await admin()('POST', '/deliveries/retry', {
        subscriptionId: o.subscription,
        plantId: o.plant,
        since: o.since,
        until: o.until,
      }),
      (d) => `${d.requeued} failed deliveries re-queued`,
    ),
  );

// dead letters
const deadLetters = program.command('dead-letters').alias('dlq').description('list, show, redrive, discard');
deadLetters
  .command('list')
  .description('newest first')
  .addOption(new Option('--status <status>').choices(['dead', 'redriving', 'redriven', 'discarded']))
  .option('--limit <n>', '1 to 500', integer)
  .option('--cursor <cursor>')
  .action(async (o) =>
    print(await admin()('GET', `/dead-letters${query({ status: o.status, limit: o.limit, cursor: o.cursor })}`), (d) =>
      pageOf(d, DEAD_LETTER_COLUMNS),
    ),
  );
deadLetters
  .command('show')
  .description('a dead letter with its original value and headers')
  .argument('<id>')
  .action(async (id) => print(await admin()('GET', `/dead-letters/${encodeURIComponent(id)}`), (d) => details(d)));
for (const [name, verb] of [
  ['redrive', 'republish to plant.created (after fixing the cause)'],
  ['discard', 'mark discarded'],
])
  deadLetters
    .command(name)
    .description(`${verb}: one or many`)
    .argument('<ids...>')
    .action(async (ids) => {
      const result = await admin()('POST', `/dead-letters/${name}`, { ids });
      print(result, (d) =>
        [
          `${name === 'redrive' ? 'redriven' : 'discarded'}: ${d.done.join(', ') || 'none'}`,
          ...d.skipped.map((/** @type {{id: string, status: string}} */ s) => `left as it was: ${s.id} (${s.status})`),
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
  .action(async (o) => {
    const token = readToken({
      flag: 'webhook-token',
      value: o.webhookToken,
      file: o.webhookTokenFile,
      variable: 'PLANT_STORE_WEBHOOK_TOKEN',
    });
    const call = client({ url: opts().url, token, tokenVariable: 'PLANT_STORE_WEBHOOK_TOKEN' });
    const plant = { id: o.id ?? Math.floor(Math.random() * 1e9) + 1, name: o.name, ...(o.tag ? { tag: o.tag } : {}) };
    const key = o.webhookId ?? `msg_${randomUUID()}`;
    const res = await call('POST', '/plant/webhook', plant, { 'webhook-id': key });
    print(
      { ...res, plant, webhookId: key },
      (d) => `accepted plant ${plant.id} as event ${d.eventId} (webhook-id ${key})`,
    );
  });

async function main() {
  try {
    await program.parseAsync(process.argv);
  } catch (err) {
    if (err instanceof ApiError) {
      process.stderr.write(`plant-store: ${err.message}\n`);
      if (opts().json && err.problem) process.stdout.write(`${JSON.stringify(err.problem, null, 2)}\n`);
      process.exitCode = err.exitCode;
      return;
    }
    const e = /** @type {{ code?: string, exitCode?: number, message: string }} */ (err);
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) {
      // --help and --version are not failures; every other complaint of the parser is a usage error.
      process.exitCode = e.code === 'commander.helpDisplayed' || e.code === 'commander.version' ? 0 : EXIT.usage;
      return;
    }
    process.stderr.write(`plant-store: ${e.message}\n`);
    process.exitCode = EXIT.unavailable;
  }
}

main();
