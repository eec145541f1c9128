// What the workers say of their Kafka consumers (the watchdog's view, issue #33): forced rejoins from /metrics, and
// for a worker that is not ready, why (a consumer judged stuck names itself and its reason in /readyz).
import type { ChaosStack } from './stack';

const metricsPort = (stack: ChaosStack, i: number) => Number(stack.workerPorts[i]);

/** plant_store_consumer_forced_rejoins_total of each worker (its consumers summed; 0 for one not running). */
export async function forcedRejoins(stack: ChaosStack): Promise<number[]> {
  return Promise.all(
    stack.workers.map(async (w, i) => {
      if (!w.running) return 0;
      const text = await get(`http://127.0.0.1:${metricsPort(stack, i)}/metrics`).catch(() => '');
      let total = 0;
      for (const m of text.matchAll(/^plant_store_consumer_forced_rejoins_total\{[^}]*\} (\d+)/gm))
        total += Number(m[1]);
      return total;
    }),
  );
}

/** Rejoins between two readings; a worker whose count went down was restarted, and all of its count is new. */
export const rejoinsBetween = (before: number[], after: number[]) =>
  after.reduce((sum, n, i) => sum + (n >= (before[i] ?? 0) ? n - (before[i] ?? 0) : n), 0);

/** For each worker that is not ready: its name and what its /readyz says (which consumer is stuck, and why). */
export async function notReadyWorkers(stack: ChaosStack): Promise<string[]> {
  const out: string[] = [];
  for (const [i, w] of stack.workers.entries()) {
    if (!w.running) {
      out.push(`${w.name}: not running`);
      continue;
    }
    const res = await fetch(`http://127.0.0.1:${metricsPort(stack, i)}/readyz`).catch((err: Error) => err);
    if (res instanceof Error) out.push(`${w.name}: /readyz did not answer (${res.message})`);
    else if (res.status !== 200) out.push(`${w.name}: ${(await res.text()).slice(0, 600)}`);
  }
  return out;
}

async function get(url: string): Promise<string> {
  const res = await fetch(url);
  return res.text();
}
