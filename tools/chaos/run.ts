// `npm run chaos`: the fault suite. Brings up its own broker, database, two workers and two gateways, subscribes
// a local receiver (and, for a scenario with a broker destination, a stream of a Redis of its own beside it), and
// for each scenario sends a paced stream of unique plants, injects one fault mid-load, waits for the pipeline to
// settle and audits the ledger against the database, the receiver and that destination. Prints a table
// and exits non-zero if any plant acknowledged with a 200 was lost (or stored twice, or wrongly).
//   npm run chaos                         every scenario, 20,000 plants at 300/s each
//   npm run chaos -- --profile short      what `npm test` runs (test/faults/chaos.e2e-spec.ts)
//   npm run chaos -- --plants 5000 --rate 200 --only "broker SIGKILL, restart,PostgreSQL paused"
//   npm run chaos -- --brokers 3          on a three-node KRaft cluster, with the cluster scenarios added
//   npm run chaos -- --profile cluster-short   what `npm test` runs on three brokers
import fs from 'node:fs';
import path from 'node:path';
import { Pool } from 'pg';
import { build } from '../local-stack/build';
import { stopEverythingOnInterrupt } from '../local-stack/supervisor';
import { localBrokers, LocalBrokers } from '../harness/brokers';
import { audit, auditDestination, ScenarioResult, settle, topicSize } from './audit';
import { forcedRejoins, notReadyWorkers, rejoinsBetween } from './consumers';
import { ChaosStream } from './destination';
import { ChaosReceiver } from './receiver';
import { FaultContext, Profile, PROFILES, SCENARIOS } from './scenarios';
import { sendPlants } from './sender';
import { ADMIN_TOKEN, ChaosStack, info, LOG_DIR, startChaosStack, step, WEBHOOK_TOKEN } from './stack';

/** Settings for the apps: a retry schedule that outlasts the subscriber outage within the run, a short publish timeout. */
const APP_ENV = {
  PUBLISH_TIMEOUT_MS: '3000',
  DELIVERY_RETRY_SCHEDULE: '0s,1s,2s,4s,8s,15s,30s,30s,30s,30s,30s',
  DELIVERY_POLL_MS: '500',
};

export async function runChaos(
  profile: Profile,
  { buildFirst = true, kafkaPort }: { buildFirst?: boolean; kafkaPort?: number } = {},
): Promise<ScenarioResult[]> {
  if (buildFirst) await build();
  const stack = await startChaosStack(APP_ENV, { brokers: profile.brokers, kafkaPort });
  const receiver = new ChaosReceiver();
  const pool = new Pool({ connectionString: stack.databaseUrl, max: 2 });
  pool.on('error', () => undefined); // PostgreSQL is killed on purpose; the audit's queries come after
  const results: ScenarioResult[] = [];
  let brokers: LocalBrokers | undefined;
  try {
    const receiverSubscription = await subscribe(stack, await receiver.listen(), 'chaos receiver');
    const scenarios = SCENARIOS.filter(
      (s) => profile.scenarios.includes(s.name) && (s.minBrokers ?? 1) <= profile.brokers,
    );
    // The destinations' brokers: the suite's own (it kills them), started once for the scenarios that have one.
    const kinds = [...new Set(scenarios.flatMap((s) => (s.destination ? [s.destination] : [])))];
    if (kinds.length > 0) brokers = await localBrokers(kinds, { standardPorts: false });
    for (const [i, scenario] of scenarios.entries()) {
      await ensureRunning(stack);
      const ctx: FaultContext = { stack, receiver, profile, poisoned: 0, failures: [], brokers };
      // Its broker destination, beside the receiver for this scenario only.
      const stream = scenario.destination && new ChaosStream(brokers!.redis, `chaos-${i + 1}-${Date.now()}`);
      const streamSubscription = stream && (await subscribe(stack, stream.url, `chaos ${scenario.destination}`));
      const dlqBefore = await topicSize(stack.brokers, 'plant.created.dlq');
      const rejoinsBefore = await forcedRejoins(stack);
      const s = step(
        `Scenario ${i + 1}/${scenarios.length}: ${scenario.name} (${profile.plants} plants at ${profile.rate}/s)`,
      );
      const firstId = (i + 1) * 10_000_000;
      let sent = 0;
      const load = sendPlants(
        firstId,
        profile.plants,
        profile.rate,
        stack.gatewayUrls,
        WEBHOOK_TOKEN,
        `${i}`,
        (n) => (sent = n),
      );
      await until(() => sent >= profile.plants * 0.3);
      const fault = { start: Date.now(), end: 0 };
      info(`  fault injected after ${sent} plants`);
      await scenario.inject(ctx);
      fault.end = Date.now();
      info(`  healed after ${((fault.end - fault.start) / 1000).toFixed(1)}s`);
      const ledger = await load;
      await settle(ledger, receiver);
      if (stream) await settle(ledger, stream, 90_000, () => stream.poll());
      await ensureRunning(stack);
      const result = await audit(
        scenario.name,
        ledger,
        receiver,
        pool,
        fault,
        scenario.duplicatesAllowed,
        receiverSubscription,
      );
      if (stream) {
        const d = await auditDestination(scenario.destination!, streamSubscription!, ledger, stream, pool, fault);
        result.destination = d;
        result.passed &&= d.lost === 0 && (scenario.duplicatesAllowed || d.unrecordedSends === 0);
        if (d.lost > 0) ctx.failures.push(`${d.lost} acknowledged plants never reached the ${d.kind} destination`);
        if (d.retried === 0)
          ctx.failures.push(`no delivery to the ${d.kind} destination failed: the fault went unseen`);
        await unsubscribe(stack, streamSubscription!);
        await stream.close();
      }
      if (ctx.poisoned > 0) {
        await until(
          async () => (await topicSize(stack.brokers, 'plant.created.dlq')) - dlqBefore >= ctx.poisoned,
          120_000,
        );
        result.deadLettered = (await topicSize(stack.brokers, 'plant.created.dlq')) - dlqBefore;
        result.passed &&= result.deadLettered >= ctx.poisoned;
      }
      result.forcedRejoins = rejoinsBetween(rejoinsBefore, await forcedRejoins(stack));
      result.failures = [...ctx.failures, ...(scenario.check?.(ledger, ctx) ?? [])];
      // Something never arrived: say which consumer was stuck and why, as its worker's /readyz tells it.
      if (!Number.isFinite(result.recoveredAfterS) || result.lost > 0)
        for (const w of await notReadyWorkers(stack)) result.failures.push(`not ready: ${w}`);
      result.passed &&= result.failures.length === 0;
      for (const f of result.failures) info(`  FAILED: ${f}`);
      // A failed scenario's ledger, every answer of it, for whoever has to find out why.
      if (!result.passed) fs.writeFileSync(path.join(LOG_DIR, `ledger-${i + 1}.json`), JSON.stringify(ledger));
      results.push(result);
      s.done(`${result.passed ? 'passed' : 'FAILED'}: ${result.acknowledged} acknowledged, ${result.lost} lost`);
    }
  } finally {
    await pool.end().catch(() => undefined);
    await receiver.close();
    await brokers?.stop();
    await stack.stop();
  }
  fs.writeFileSync(path.join(LOG_DIR, 'results.json'), JSON.stringify(results, null, 2));
  return results;
}

/** Subscribes `url`; resolves with the subscription's id. */
async function subscribe(stack: ChaosStack, url: string, description: string): Promise<string> {
  const res = await fetch(`${stack.gatewayUrls[0]}/subscriptions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url, description }),
  });
  if (res.status !== 201) throw new Error(`subscribing the ${description} failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

/** A scenario's destination goes with it: the next scenarios deliver to the receiver only. */
async function unsubscribe(stack: ChaosStack, id: string) {
  const res = await fetch(`${stack.gatewayUrls[0]}/subscriptions/${id}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  if (!res.ok) throw new Error(`unsubscribing ${id} failed: ${res.status} ${await res.text()}`);
}

/** A scenario starts with every part up, whatever the previous one left. */
async function ensureRunning(stack: ChaosStack) {
  for (const service of [...stack.kafkaNodes, stack.postgres, ...stack.workers, ...stack.gateways])
    if (!service.running) await stack.restart(service);
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 600_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000}s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function printResults(results: ScenarioResult[]) {
  console.table(
    results.map((r) => ({
      scenario: r.scenario,
      acked: `${r.acknowledged}/${r.sent}`,
      stored: r.stored,
      delivered: r.delivered,
      LOST: r.lost,
      'stored twice/wrong': `${r.storedTwice}/${r.wrongLastEvent}`,
      'delivered 2x': r.deliveredTwice,
      'of them unrecorded': r.unrecordedSends,
      '503s': r.sender503s,
      'conn errors': r.senderConnectionErrors,
      'ack gap s': r.longestAckGapS,
      'slowest ack s': r.slowestAckS,
      'recovered s': r.recoveredAfterS,
      'forced rejoins': r.forcedRejoins ?? '',
      'dead-lettered': r.deadLettered ?? '',
      destination: r.destination
        ? `${r.destination.kind}: ${r.destination.delivered}, ${r.destination.lost} lost, ` +
          `${r.destination.deliveredTwice} 2x (${r.destination.unrecordedSends} unrecorded), ` +
          `${r.destination.retried} retried, recovered ${r.destination.recoveredAfterS} s`
        : '',
      result: r.passed ? 'pass' : 'FAIL',
    })),
  );
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main() {
  stopEverythingOnInterrupt('the fault suite');
  const base = PROFILES[arg('profile') ?? 'full'];
  if (!base) throw new Error(`--profile must be one of: ${Object.keys(PROFILES).join(', ')}`);
  const only = arg('only');
  const profile: Profile = {
    ...base,
    plants: Number(arg('plants') ?? base.plants),
    rate: Number(arg('rate') ?? base.rate),
    brokers: Number(arg('brokers') ?? base.brokers),
    scenarios: only
      ? base.scenarios.filter((s) => only.split(',').some((o) => s.startsWith(o.trim())))
      : base.scenarios,
  };
  if (profile.brokers !== 1 && profile.brokers !== 3) throw new Error('--brokers must be 1 or 3');
  const results = await runChaos(profile, {
    buildFirst: !process.argv.includes('--no-build'),
    // the first broker's port, when the chaos profile's 31092.. are taken (the nodes take +2, +4)
    kafkaPort: arg('kafka-port') ? Number(arg('kafka-port')) : undefined,
  });
  printResults(results);
  console.log(`Per-process logs and results.json: ${path.relative(process.cwd(), LOG_DIR)}/`);
  const failed = results.filter((r) => !r.passed);
  if (failed.length > 0) {
    console.error(`${failed.length} scenario(s) failed: ${failed.map((r) => r.scenario).join('; ')}`);
    process.exit(1);
  }
}

if (require.main === module)
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
