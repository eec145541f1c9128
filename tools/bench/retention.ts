// Retention at scale (issue 27, target 5): 10 million deliveries over 30 days, and what pruning the oldest day
// costs, the way each layout prunes it, with writers and a listing running the whole time:
// - before: every delivery a row of `deliveries`, pruned by the worker's batched DELETE (prune-deliveries,
//   RETENTION_BATCH_SIZE rows a statement, a pause between), as before migration 21;
// - after: deliveries that succeeded at once appended to `delivery_log`, a partition a day, pruned by detaching the
//   day's partition concurrently and dropping it (RetentionRepository.maintainLog, as the worker's sweep does).
// Reported: the pruning statements' time, the CPU of the PostgreSQL backend that ran them, and the latency of the
// writers (multi-row inserts, as records are written) and of the listing, before and during the pruning.
//
// Runs on a scratch database of the PostgreSQL in DATABASE_URL (it needs about 8 GB of disk while it runs, and
// drops it at the end). One benchmark at a time machine-wide: `flock /work/bench.lock npm run bench:retention`.
// `--rows N` to generate another number (default 10,000,000).
import fs from 'node:fs';
import { Pool } from 'pg';
import { RetentionRepository, runMigrations } from '@app/persistence';
import { DELIVERIES_SQL } from '../../libs/persistence/src/deliveries/delivery.repository';
import { RETENTION_SQL } from '../../libs/persistence/src/retention/retention.repository';

const PRUNE_DELIVERIES = RETENTION_SQL.statement('prune-deliveries');
const LIST_DELIVERIES = DELIVERIES_SQL.statement('list-deliveries');
import { scratchDatabase } from '../harness/stack';

const DAY_MS = 86_400_000;
const DAYS = 30;
const BATCH = 1000; // RETENTION_BATCH_SIZE's default
const PAUSE_MS = 20; // the pruner's pause between batches
const WRITE_ROWS = 50; // rows per insert statement, as a record batch writes them

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ROWS = arg('rows', 10_000_000);

/** CPU seconds a backend (a local PostgreSQL's process) has used: utime + stime from /proc. */
function backendCpu(pid: number): number | null {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks, 100 a second
  } catch {
    return null;
  }
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
};

/** Loops of `statement` on connections of their own until stopped; each statement's latency, by phase. */
function load(url: string, loops: number, statement: (i: number) => { text: string; values?: unknown[] }) {
  const pool = new Pool({ connectionString: url, max: loops });
  const phases: Record<string, number[]> = {};
  let phase = 'idle';
  let running = true;
  let n = 0;
  const done = Promise.all(
    Array.from({ length: loops }, async () => {
      while (running) {
        const s = statement(n++);
        const t = performance.now();
        await pool.query(s.text, s.values);
        (phases[phase] ??= []).push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 5));
      }
    }),
  );
  return {
    phase: (p: string) => (phase = p),
    stop: async () => {
      running = false;
      await done;
      await pool.end();
      return phases;
    },
  };
}

const fmt = (ms: number) => `${ms < 10 ? ms.toFixed(2) : ms.toFixed(0)} ms`;
const summary = (xs: number[] = []) =>
  xs.length === 0
    ? 'no statement'
    : `${xs.length} statements, p50 ${fmt(percentile(xs, 50))}, p99 ${fmt(percentile(xs, 99))}, max ${fmt(Math.max(...xs))}`;
/** The statements that ran while it pruned, and in the second after (a short drop may see none of its own). */
const during = (p: Record<string, number[]>) => [...(p.prune ?? []), ...(p.after ?? [])];

async function timed<T>(what: string, f: () => Promise<T>): Promise<T> {
  const t = performance.now();
  const r = await f();
  console.log(`  ${what}: ${((performance.now() - t) / 1000).toFixed(1)} s`);
  return r;
}

async function main() {
  const db = await scratchDatabase('bench_retention', 2);
  const url = db.url;
  try {
    await runMigrations(db.pool);
    const start = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - DAYS * DAY_MS); // 00:00 UTC, 30 days back
    const cutOff = new Date(start.getTime() + DAY_MS); // the oldest day goes
    const spanS = (Date.now() - 60_000 - start.getTime()) / 1000;
    await db.pool.query(
      `INSERT INTO subscriptions (url, secret) SELECT 'https://receiver.example/hook', 'sealed' FROM generate_series(1, 10)`,
    );
    const subs = (await db.pool.query('SELECT id FROM subscriptions ORDER BY id')).rows.map((r) => r.id as string);
    // One delivery of the generated ones: its attempt as a record writes it.
    const columns = (table: 'deliveries' | 'delivery_log') => `
      SELECT ${table === 'delivery_log' ? 'gen_random_uuid(), ' : ''}(ARRAY['${subs.join("','")}']::uuid[])[1 + g % 10],
             'evt-' || g, g / 10, $1::timestamptz + (g * $2::float8 / $3::float8) * interval '1 second',
             jsonb_build_array(jsonb_build_object('attemptedAt', now(), 'status', 204, 'latencyMs', 12, 'error', null,
                               'responseBody', 'ok', 'signature', 'v1,abc')),
             $1::timestamptz + (g * $2::float8 / $3::float8) * interval '1 second', $1::timestamptz + (g * $2::float8 / $3::float8) * interval '1 second'`;
    const chunk = 1_000_000;
    // Generated without their indexes, which are then built whole (a sort, not ten million inserts): the same
    // indexes in the end, in a fraction of the time.
    const indexes = {
      deliveries: {
        drop: `ALTER TABLE deliveries DROP CONSTRAINT deliveries_pkey, DROP CONSTRAINT deliveries_seq_key,
                 DROP CONSTRAINT deliveries_subscription_id_event_id_key;
               DROP INDEX deliveries_due, deliveries_plant_order, deliveries_age`,
        build: `ALTER TABLE deliveries ADD PRIMARY KEY (id), ADD UNIQUE (seq), ADD UNIQUE (subscription_id, event_id);
                CREATE INDEX deliveries_due ON deliveries (subscription_id, next_attempt_at) WHERE status = 'pending';
                CREATE INDEX deliveries_plant_order ON deliveries (subscription_id, plant_id, seq) WHERE status = 'pending';
                CREATE INDEX deliveries_age ON deliveries USING brin (created_at)`,
      },
      delivery_log: {
        drop: 'DROP INDEX delivery_log_seq, delivery_log_id, delivery_log_age',
        build: `CREATE INDEX delivery_log_seq ON delivery_log (seq);
                CREATE INDEX delivery_log_id ON delivery_log (id);
                CREATE INDEX delivery_log_age ON delivery_log USING brin (created_at)`,
      },
    };
    const generate = async (table: 'deliveries' | 'delivery_log', into: string) => {
      await db.pool.query(indexes[table].drop);
      for (let from = 0; from < ROWS; from += chunk)
        await db.pool.query(
          `INSERT INTO ${table} ${into} ${columns(table)}
           ${table === 'deliveries' ? ", 'succeeded', 1" : ''} FROM generate_series($4::bigint, $5::bigint) g`,
          [start, spanS, ROWS, from, Math.min(ROWS, from + chunk) - 1],
        );
      const client = await db.pool.connect();
      try {
        await client.query("SET maintenance_work_mem = '256MB'");
        await client.query(indexes[table].build);
        await client.query(`VACUUM ANALYZE ${table}`);
      } finally {
        client.release();
      }
    };
    const listing = {
      text: LIST_DELIVERIES.text,
      values: LIST_DELIVERIES.values({
        subscription: null,
        status: null,
        plant: null,
        before: null,
        limit: 51,
        since: null,
        until: null,
      }),
    };
    const report: string[] = [];

    // Before: one table, pruned by DELETE.
    console.log(`before: ${ROWS.toLocaleString('en')} rows in deliveries over ${DAYS} days`);
    await timed('generated', () =>
      generate(
        'deliveries',
        `(subscription_id, event_id, plant_id, event_time, attempt_log, created_at, updated_at, status, attempts)`,
      ),
    );
    const dayRows = async (table: string) =>
      (await db.pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE created_at < $1`, [cutOff])).rows[0].n;
    let written = 0;
    /**
     * Prunes the oldest day of `table` with `prune` (on a connection of its own) while two writers insert into it
     * and a listing reads: what it cost, and what the others saw before it and while it ran.
     */
    const measure = async (table: 'deliveries' | 'delivery_log', how: string, prune: (p: Pool) => Promise<string>) => {
      const day = await dayRows(table);
      // As records write them: a success, appended (after) or a row of deliveries (before).
      const status = table === 'deliveries' ? ['status, ', "'succeeded', "] : ['', ''];
      const writers = load(url, 2, () => ({
        text: `INSERT INTO ${table} (${status[0]}id, subscription_id, event_id, plant_id, event_time, attempts, attempt_log)
               SELECT ${status[1]}gen_random_uuid(), $1, 'w-' || $2 || '-' || g, g, now(), 1, '[]'
               FROM generate_series(1, ${WRITE_ROWS}) g`,
        values: [subs[0], written++],
      }));
      const readers = load(url, 1, () => listing);
      await new Promise((r) => setTimeout(r, 3000));
      writers.phase('prune');
      readers.phase('prune');
      const maintenance = new Pool({ connectionString: url, max: 1 });
      const pid = (await maintenance.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      const cpu0 = backendCpu(pid);
      const wall = performance.now();
      const what = await prune(maintenance);
      const wallMs = performance.now() - wall;
      const cpu1 = backendCpu(pid);
      writers.phase('after');
      readers.phase('after');
      await new Promise((r) => setTimeout(r, 1000));
      const [w, l] = [await writers.stop(), await readers.stop()];
      await maintenance.end();
      report.push(
        `${how}: the oldest day, ${day.toLocaleString('en')} rows: ${what}, ${(wallMs / 1000).toFixed(3)} s wall, ` +
          `backend CPU ${cpu0 === null || cpu1 === null ? 'n/a' : `${(cpu1 - cpu0).toFixed(2)} s`}`,
        `  writers (${WRITE_ROWS}-row inserts) before: ${summary(w.idle)}`,
        `  writers during it and the second after: ${summary(during(w))}`,
        `  listing before: ${summary(l.idle)}; during: ${summary(during(l))}`,
      );
    };

    await measure('deliveries', 'before (batched DELETE)', async (maintenance) => {
      let deleted = 0;
      let statementsMs = 0;
      let statements = 0;
      for (;;) {
        const t = performance.now();
        const n =
          (await maintenance.query(PRUNE_DELIVERIES.text, PRUNE_DELIVERIES.values({ before: cutOff, limit: BATCH })))
            .rowCount ?? 0;
        statementsMs += performance.now() - t;
        statements++;
        deleted += n;
        if (n < BATCH) break;
        await new Promise((r) => setTimeout(r, PAUSE_MS));
      }
      return `${deleted.toLocaleString('en')} deleted in ${statements} statements, ${(statementsMs / 1000).toFixed(2)} s of statement time`;
    });
    await db.pool.query('TRUNCATE deliveries');

    // After: the log, a partition a day, pruned by dropping the day.
    console.log(`after: ${ROWS.toLocaleString('en')} rows in delivery_log over ${DAYS} days`);
    await db.pool.query('SELECT delivery_log_add_partitions($1::date, $2::date)', [
      start.toISOString().slice(0, 10),
      new Date(Date.now() + 7 * DAY_MS).toISOString().slice(0, 10),
    ]);
    await timed('generated', () =>
      generate(
        'delivery_log',
        '(id, subscription_id, event_id, plant_id, event_time, attempt_log, created_at, updated_at)',
      ),
    );
    await measure('delivery_log', 'after (partition drop)', async (owner) => {
      const done = await new RetentionRepository(owner).maintainLog(Date.now(), cutOff, 7);
      const days = done?.dropped.map((d) => d.day).join(', ');
      return `dropped ${days} (the whole pass: the week ahead checked, the day detached concurrently, then dropped)`;
    });
    console.log(`\n${report.join('\n')}`);
  } finally {
    await db.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
