// The run: reads the routes from the gateway's /openapi.json, sends the generated requests on `concurrency`
// keep-alive connections (each raw case on a connection of its own), checks every answer, watches the gateway's
// memory and that no process exits, then waits for every accepted webhook to be stored and counts the ones that
// were dead-lettered instead.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { Kafka, logLevel } from 'kafkajs';
import { Pool } from 'pg';
import { PLANT_CREATED_DLQ_TOPIC } from '@app/contracts';
import { pools } from './values';
import { check, eventIdOf, excerpt, Finding } from './checks';
import { CaseGenerator, Context, FuzzCase } from './generate';
import { OpenApiDocument, operationsOf, TokenKind } from './routes';
import { Lane, Outcome } from './wire';
import { Rng } from './values';
import { Receiver } from '../harness/receiver';

export interface FuzzTarget {
  gatewayUrl: string;
  /** The database the fuzzed worker stores into. */
  databaseUrl: string;
  /** The Kafka the stack uses: the dead-letter topic's size says what the worker must have archived. */
  brokers: string[];
  /** Where the worker's dead-letter archive started, per partition (absent: at the start). */
  dlqStart: Map<number, number>;
  tokens: { webhook: string; adminRead: string; adminWrite: string };
  /** The processes that must not exit during the run (pid for the memory readings). */
  processes: { name: string; pid: number | undefined; exited: () => boolean; logFile?: string }[];
  gatewayPid: number | undefined;
  limit: number;
}

export interface FuzzOptions {
  requests: number;
  seed: number;
  concurrency: number;
  /** A refusal decided from the head (a huge declared chunk) must come within this. */
  promptMs: number;
  /** Any other answer within this. */
  deadlineMs: number;
  maxRssMb: number;
  /** How long accepted webhooks may take to be stored once the load ends. */
  settleMs: number;
  progressMs: number;
  /** Where findings are written in full, one JSON per line, with each request's bytes. */
  findingsFile?: string;
  log: (line: string) => void;
}

export interface FuzzReport {
  seed: number;
  requests: number;
  seconds: number;
  byClass: Record<string, number>;
  byRoute: Record<string, Record<string, number>>;
  findings: Record<string, { count: number; examples: string[] }>;
  peakRssMb: number | null;
  webhooks: { accepted: number; stored: number; deadLettered: number; missing: number };
  crashed: string[];
  /** Which of the known classes of finding this run caught (rule → count). */
  passed: boolean;
}

/** An outcome in a few words, for the next request's finding. */
const inWords = (o: Outcome) =>
  o.kind === 'answer'
    ? `${o.answer.status}${o.answer.closes ? ', Connection: close' : ''}`
    : `${o.kind} after ${o.ms} ms`;

export async function fuzz(target: FuzzTarget, o: FuzzOptions): Promise<FuzzReport> {
  const started = performance.now();
  const doc = (await (await fetch(`${target.gatewayUrl}/openapi.json`)).json()) as OpenApiDocument;
  const ops = operationsOf(doc);
  const url = new URL(target.gatewayUrl);
  const receiver = await startReceiver();
  const harvested = new Map<string, string[]>();
  const auth = {
    webhook: `Bearer ${target.tokens.webhook}`,
    adminRead: `Bearer ${target.tokens.adminRead}`,
    adminWrite: `Bearer ${target.tokens.adminWrite}`,
  };
  const ctx: Context = {
    doc,
    ops,
    pools: pools(o.seed),
    authorization: (rng: Rng, kind: TokenKind) => {
      if (kind === 'none') return null;
      if (kind === 'wrong')
        return rng.pick([
          `Bearer wrong-${randomHex(rng)}`,
          'Bearer',
          'Bearer ',
          `Basic ${Buffer.from('a:b').toString('base64')}`,
          `Bearer ${target.tokens.webhook.slice(0, -1)}`,
          `Bearer ${target.tokens.webhook} extra`,
          `Token ${target.tokens.adminWrite}`,
          `Bearer ${'x'.repeat(8000)}`,
          'Bearer é',
        ]);
      return auth[kind];
    },
    nonce: `fz${o.seed.toString(36)}${randomBytes(3).toString('hex')}`,
    limit: target.limit,
    host: url.host,
    receiverUrl: receiver.url,
    harvested,
  };
  const gen = new CaseGenerator(ctx, o.seed);
  const queue: FuzzCase[] = gen.catalogue();

  const report: FuzzReport = {
    seed: o.seed,
    requests: 0,
    seconds: 0,
    byClass: {},
    byRoute: {},
    findings: {},
    peakRssMb: null,
    webhooks: { accepted: 0, stored: 0, deadLettered: 0, missing: 0 },
    crashed: [],
    passed: false,
  };
  const accepted = new Set<string>();
  const keys = new Map<string, { digests: Set<string>; eventIds: Set<string>; example: FuzzCase }>();
  const findingsOut = o.findingsFile ? fs.createWriteStream(o.findingsFile) : null;
  let findingLines = 0;

  const record = (c: FuzzCase, outcome: Outcome, findings: Finding[]) => {
    report.requests++;
    const status = outcome.kind === 'answer' ? String(outcome.answer.status) : outcome.kind;
    const cls = outcome.kind === 'answer' ? `${status[0]}xx` : outcome.kind;
    report.byClass[cls] = (report.byClass[cls] ?? 0) + 1;
    const route = (report.byRoute[c.route] ??= {});
    route[status] = (route[status] ?? 0) + 1;
    for (const f of findings) addFinding(c, outcome, f);
    if (outcome.kind !== 'answer') return;
    const a = outcome.answer;
    if (a.status === 200 && (c.op?.isWebhook || c.family === 'raw')) {
      const id = eventIdOf(a.body);
      if (id) {
        accepted.add(id);
        if (c.key && c.digest && c.op?.isWebhook) {
          const k = keys.get(c.key) ?? { digests: new Set(), eventIds: new Set(), example: c };
          k.digests.add(c.digest);
          k.eventIds.add(id);
          keys.set(c.key, k);
        }
      }
    }
    if (a.status >= 200 && a.status < 300 && c.op && !c.op.isWebhook) harvest(c.op.path, a.body, harvested);
  };

  const addFinding = (c: FuzzCase, outcome: Outcome, f: Finding) => {
    const entry = (report.findings[f.rule] ??= { count: 0, examples: [] });
    entry.count++;
    const answer =
      outcome.kind === 'answer' ? `${outcome.answer.status} ${excerpt(outcome.answer.body, 200)}` : outcome.kind;
    if (entry.examples.length < 3)
      entry.examples.push(
        `#${c.n} ${c.route} [${c.note}]: ${f.detail}\n      request: ${show(c.parts)}\n      answer: ${answer}`,
      );
    if (findingsOut && findingLines++ < 2000)
      findingsOut.write(
        `${JSON.stringify({ n: c.n, seed: o.seed, rule: f.rule, detail: f.detail, route: c.route, note: c.note, answer, request: Buffer.concat(c.parts).toString('base64') })}\n`,
      );
  };

  // The gateway's memory, sampled all along; its peak is what the run reports.
  const rss = setInterval(() => {
    const mb = rssMb(target.gatewayPid);
    if (mb !== null) report.peakRssMb = Math.max(report.peakRssMb ?? 0, mb);
  }, 250);
  let last = { at: performance.now(), n: 0 };
  const progress = setInterval(() => {
    const now = performance.now();
    const rate = Math.round(((report.requests - last.n) * 1000) / (now - last.at));
    last = { at: now, n: report.requests };
    const classes = Object.entries(report.byClass)
      .sort()
      .map(([k, v]) => `${k} ${v}`)
      .join('  ');
    const found = Object.values(report.findings).reduce((s, f) => s + f.count, 0);
    o.log(
      `${report.requests}/${o.requests} requests  ${rate}/s  ${classes}  findings ${found}  gateway RSS ${rssMb(target.gatewayPid) ?? '?'} MB`,
    );
  }, o.progressMs);

  let issued = 0;
  const nextCase = (): FuzzCase | null => {
    if (issued >= o.requests) return null;
    issued++;
    try {
      return queue.shift() ?? gen.next();
    } catch (err) {
      // A generator bug costs one request and is reported, not the whole run.
      const entry = (report.findings['fuzzer-error'] ??= { count: 0, examples: [] });
      entry.count++;
      if (entry.examples.length < 3) entry.examples.push(String((err as Error).stack ?? err));
      return nextCase();
    }
  };
  const lane = async () => {
    const keepAlive = new Lane(url.hostname, Number(url.port));
    /** What the kept-alive connection carried last: a connection closed under the next request names it. */
    let before = '';
    for (let c = nextCase(); c; c = nextCase()) {
      // Raw framing leaves a connection in doubt: each gets one of its own.
      const l = c.family === 'raw' ? new Lane(url.hostname, Number(url.port)) : keepAlive;
      const deadlineMs = c.prompt ? o.promptMs : o.deadlineMs;
      const reused = l === keepAlive && l.isOpen();
      const outcome = await l.send({ parts: c.parts, deadlineMs, head: c.head, endAfter: c.endAfter });
      if (l !== keepAlive) l.close();
      else {
        if (outcome.kind === 'closed' && reused) c.note += `; on a connection kept open after #${before}`;
        before = `${c.n} ${c.route} [${c.note}]: ${inWords(outcome)}`;
      }
      record(c, outcome, check(c, outcome, o.promptMs));
      for (const p of target.processes) if (p.exited() && !report.crashed.includes(p.name)) report.crashed.push(p.name);
    }
    keepAlive.close();
  };
  try {
    await Promise.all(Array.from({ length: o.concurrency }, lane));
  } finally {
    clearInterval(progress);
    clearInterval(rss);
    await receiver.close();
  }
  report.seconds = (performance.now() - started) / 1000;

  for (const [key, k] of keys) {
    if (k.digests.size > 1)
      addFinding(
        k.example,
        { kind: 'closed', ms: 0 },
        {
          rule: 'key-reused-accepted',
          detail: `webhook-id "${key.slice(0, 80)}" got 200 for ${k.digests.size} different plants`,
        },
      );
    if (k.eventIds.size > 1)
      addFinding(
        k.example,
        { kind: 'closed', ms: 0 },
        {
          rule: 'key-changed-event-id',
          detail: `webhook-id "${key.slice(0, 80)}" got ${k.eventIds.size} different event ids`,
        },
      );
  }

  o.log(`Waiting for the ${accepted.size} accepted webhooks to be stored…`);
  report.webhooks = await settle(target.databaseUrl, accepted, o.settleMs);
  if (report.webhooks.deadLettered > 0)
    report.findings['accepted-then-dead-lettered'] = {
      count: report.webhooks.deadLettered,
      examples: await deadLetterExamples(target.databaseUrl, accepted),
    };
  if (report.webhooks.missing > 0)
    report.findings['accepted-not-stored'] = {
      count: report.webhooks.missing,
      examples: [
        `${report.webhooks.missing} event ids answered 200 are neither stored nor dead-lettered (the worker applied nothing for ${o.settleMs / 1000}s)`,
      ],
    };
  // Every record of the dead-letter topic since the worker started must reach dead_letters, where the admin API
  // shows it: an archive stuck on one record hides every later one.
  const unarchived = await unarchivedDeadLetters(target, o.settleMs / 4);
  if (unarchived > 0)
    report.findings['dead-letters-not-archived'] = {
      count: unarchived,
      examples: [`${unarchived} records of plant.created.dlq are not in dead_letters (see .local/fuzz/worker.log)`],
    };
  for (const p of target.processes) if (p.exited() && !report.crashed.includes(p.name)) report.crashed.push(p.name);
  if (report.crashed.length)
    report.findings['process-exited'] = { count: report.crashed.length, examples: report.crashed };
  if (report.peakRssMb !== null && report.peakRssMb > o.maxRssMb)
    report.findings['gateway-rss-over-bound'] = {
      count: 1,
      examples: [`peak ${report.peakRssMb} MB > ${o.maxRssMb} MB`],
    };
  findingsOut?.end();
  report.passed = Object.keys(report.findings).length === 0;
  return report;
}

/** Ids from a 2xx answer, for later requests' path parameters: `/subscriptions` answers name subscriptions. */
function harvest(path: string, body: Buffer, into: Map<string, string[]>) {
  let v: unknown;
  try {
    v = JSON.parse(body.toString('utf8'));
  } catch {
    return;
  }
  const resource = path.split('/')[1];
  const items = Array.isArray((v as { items?: unknown })?.items) ? (v as { items: unknown[] }).items : [v];
  for (const item of items.slice(0, 20)) {
    const id = (item as { id?: unknown })?.id;
    if (typeof id !== 'string' && typeof id !== 'number') continue;
    const list = into.get(resource) ?? [];
    if (!list.includes(String(id))) list.push(String(id));
    if (list.length > 200) list.shift();
    into.set(resource, list);
  }
}

/**
 * Polls PostgreSQL until every accepted event is stored or dead-lettered. A worker still catching up (it reads
 * the topic from its start, behind other suites' records on a shared broker) is given time while it applies
 * events: the run gives up after `ms` in which it applied none, or five times that in all.
 */
async function settle(databaseUrl: string, accepted: Set<string>, ms: number) {
  const pool = new Pool({ connectionString: databaseUrl, max: 1 });
  const ids = [...accepted];
  const cap = Date.now() + 5 * ms;
  let stalledSince = Date.now();
  let last = -1;
  try {
    for (;;) {
      const stored = await storedOf(pool, ids);
      const dead = new Set((await deadLettered(pool, accepted)).map((r) => r.id));
      const neither = ids.filter((id) => !stored.has(id) && !dead.has(id)).length;
      const result = { accepted: ids.length, stored: stored.size, deadLettered: dead.size, missing: neither };
      // Progress is any event the worker applied, ours or the backlog before them.
      const { rows } = await pool.query<{ n: string }>(
        'SELECT (SELECT count(*) FROM processed_events) + (SELECT count(*) FROM dead_letters) AS n',
      );
      const applied = Number(rows[0].n);
      if (applied !== last) stalledSince = Date.now();
      last = applied;
      if (neither <= 0 || Date.now() - stalledSince > ms || Date.now() > cap) return result;
      await new Promise((r) => setTimeout(r, 1000));
    }
  } finally {
    await pool.end();
  }
}

async function storedOf(pool: Pool, ids: string[]) {
  const stored = new Set<string>();
  for (let i = 0; i < ids.length; i += 5000) {
    const { rows } = await pool.query<{ event_id: string }>(
      'SELECT event_id FROM processed_events WHERE event_id = ANY($1::text[])',
      [ids.slice(i, i + 5000)],
    );
    for (const r of rows) stored.add(r.event_id);
  }
  return stored;
}

/** How many records of plant.created.dlq, as it stands now, are still missing from dead_letters after `ms`. */
async function unarchivedDeadLetters(target: FuzzTarget, ms: number): Promise<number> {
  const admin = new Kafka({ brokers: target.brokers, clientId: 'fuzz', logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(PLANT_CREATED_DLQ_TOPIC).finally(() => admin.disconnect());
  const pool = new Pool({ connectionString: target.databaseUrl, max: 1 });
  const deadline = Date.now() + ms;
  try {
    for (;;) {
      const { rows } = await pool.query<{ p: number; n: string }>(
        'SELECT dlq_partition AS p, count(*) AS n FROM dead_letters GROUP BY dlq_partition',
      );
      const archived = new Map(rows.map((r) => [r.p, Number(r.n)]));
      const missing = offsets.reduce(
        (sum, o) =>
          sum +
          Math.max(
            0,
            Number(o.high) -
              Math.max(Number(o.low), target.dlqStart.get(o.partition) ?? 0) -
              (archived.get(o.partition) ?? 0),
          ),
        0,
      );
      if (missing === 0 || Date.now() > deadline) return missing;
      await new Promise((r) => setTimeout(r, 1000));
    }
  } finally {
    await pool.end();
  }
}

/** Dead letters of this run's accepted events: their original `ce_id` header (stored base64) is one of ours. */
async function deadLettered(pool: Pool, accepted: Set<string>) {
  const { rows } = await pool.query<{ id: string; reason: string }>(
    `SELECT convert_from(decode(headers->>'ce_id', 'base64'), 'UTF8') AS id, reason FROM dead_letters WHERE headers ? 'ce_id'`,
  );
  return rows.filter((r) => accepted.has(r.id));
}

async function deadLetterExamples(databaseUrl: string, accepted: Set<string>) {
  const pool = new Pool({ connectionString: databaseUrl, max: 1 });
  try {
    return (await deadLettered(pool, accepted)).slice(0, 3).map((r) => `event ${r.id}: ${r.reason.slice(0, 300)}`);
  } finally {
    await pool.end();
  }
}

function rssMb(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return kb ? Math.round(Number(kb[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** The request's first bytes, printable: what a finding shows (the findings file has them all). */
function show(parts: Buffer[]) {
  const all = Buffer.concat(parts);
  const text = JSON.stringify(all.subarray(0, 400).toString('latin1'));
  return all.length > 400 ? `${text}… (${all.length} bytes)` : text;
}

const randomHex = (rng: Rng) => rng.int(2 ** 31).toString(16);

/** The subscriber the fuzzed subscriptions point at: the suites' receiver, accepting every delivery, keeping none. */
async function startReceiver() {
  const rx = new Receiver(false);
  await rx.start();
  return { url: `${rx.url}/hook`, close: () => rx.stop() };
}

/** The end-of-run tables. */
export function printReport(r: FuzzReport, log: (line: string) => void = console.log) {
  log(
    `\nFuzz run: seed ${r.seed}, ${r.requests} requests in ${r.seconds.toFixed(0)} s (${Math.round(r.requests / r.seconds)}/s)`,
  );
  console.table(r.byClass);
  console.table(
    Object.fromEntries(
      Object.entries(r.byRoute)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([route, s]) => {
          const classes: Record<string, number> = {};
          for (const [status, n] of Object.entries(s)) {
            const k = /^\d/.test(status) ? `${status[0]}xx` : status;
            classes[k] = (classes[k] ?? 0) + n;
          }
          return [route, classes];
        }),
    ),
  );
  console.table({
    'peak gateway RSS (MB)': r.peakRssMb ?? 'n/a',
    'webhooks accepted (200)': r.webhooks.accepted,
    stored: r.webhooks.stored,
    'dead-lettered': r.webhooks.deadLettered,
    'neither (missing)': r.webhooks.missing,
    'processes exited': r.crashed.join(', ') || 'none',
  });
  const rules = Object.entries(r.findings);
  if (rules.length === 0) log('No findings.');
  for (const [rule, f] of rules) {
    log(`FINDING ${rule}: ${f.count}`);
    for (const e of f.examples) log(`    ${e}`);
  }
}
