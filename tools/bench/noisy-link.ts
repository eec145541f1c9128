// The noisy neighbour's portal link (npm run bench:noisy-neighbour), in a process of its own: its loops of
// changes, replays and test sends must not share the event loop that paces the webhooks and timestamps the
// receiver's arrivals, or the nine's latency would include the bench's own delay, not the service's. Started by
// noisy-neighbour.ts with NOISY_* in its environment; on the message 'stop' it sends back what the link was
// answered, by call and status, and when each call it was granted returned, and exits.
import { adminClient } from '../harness/admin';

async function main() {
  const { NOISY_URL, NOISY_TOKEN, NOISY_SUBSCRIPTION, NOISY_SINCE, NOISY_KINDS } = process.env;
  const link = adminClient(NOISY_URL!, NOISY_TOKEN!);
  const kinds = (NOISY_KINDS ?? '').split(',');
  const answers: Record<string, Record<number, number>> = {};
  /** When each call the service carried out (a 2xx) was answered (ms since the epoch): the bench lines them up with
   * the nine's slowest seconds. */
  const granted: { what: string; at: number }[] = [];
  let stopped = false;
  process.on('message', (m) => m === 'stop' && (stopped = true));
  // Its loops begin with the measured run ('go'), not as the process starts: loading it is the bench's work.
  const go = new Promise<void>((resolve) => process.on('message', (m) => m === 'go' && resolve()));
  const count = (what: string, status: number) => {
    if (status >= 200 && status < 300) granted.push({ what, at: Date.now() });
    answers[what] ??= {};
    answers[what][status] = (answers[what][status] ?? 0) + 1;
  };
  const loop = async (what: string, call: (i: number) => Promise<{ status: number }>) => {
    for (let i = 0; !stopped; i++) {
      count(what, (await call(i)).status);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const sub = `/subscriptions/${NOISY_SUBSCRIPTION}`;
  process.send!('started');
  await go;
  await Promise.all([
    kinds.includes('patch') &&
      loop('PATCH headers (every worker reloads)', (i) =>
        link.call('PATCH', sub, { headers: { 'x-noisy': String(i) } }),
      ),
    kinds.includes('replay') &&
      loop('recover status=all (a replay)', () =>
        link.call('POST', `${sub}/recover?since=${encodeURIComponent(NOISY_SINCE!)}&status=all`),
      ),
    kinds.includes('test') && loop('test send', () => link.call('POST', `${sub}/test`, {})),
    // The control: as many calls as the three loops above, each costing the service nearly nothing (GET /healthz),
    // to tell what the calls cost on a shared machine from what the service lets the link spend.
    ...['one', 'two', 'three'].map(
      (n) => kinds.includes('control') && loop(`GET /healthz (control, loop ${n})`, () => link.call('GET', '/healthz')),
    ),
    // With no loop at all, wait for the stop all the same.
    new Promise<void>((resolve) => {
      const t = setInterval(() => stopped && (clearInterval(t), resolve()), 50);
    }),
  ]);
  process.send!({ answers, granted }, () => process.exit(0));
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exit(1);
});
