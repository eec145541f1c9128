import net from 'node:net';
import { OwnDatabase, ownDatabase } from '../../tools/harness/own-stack';
import { exitOf, freePort, spawnBuiltApp } from '../../tools/harness/processes';
import { waitFor } from '../../tools/harness/wait';

// The built worker's health and metrics port (main.ts) once listened on 0.0.0.0 whatever the configuration:
// on a laptop, /metrics was open to the network the laptop was on. It listens on loopback unless
// WORKER_METRICS_HOST says otherwise. 127.0.0.2 stands for "another interface of this machine": it is loopback
// too on Linux, but a socket bound to 127.0.0.1 does not answer it, while one bound to 0.0.0.0 does.
const answers = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host, port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

// Its worker runs on a database and topics of its own: on the shared ones it would claim the other suites' deliveries.
describe('the worker’s health and metrics port', () => {
  const workers: ReturnType<typeof spawnBuiltApp>[] = [];
  let own: OwnDatabase;
  beforeAll(async () => {
    own = await ownDatabase('worker_listen');
  });
  afterAll(async () => {
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => exitOf(w.child)));
    await own?.db.drop();
  });

  /** A built worker with this environment on a free port, once its /healthz answers. */
  const start = async (extra: Record<string, string>) => {
    const port = await freePort();
    const w = spawnBuiltApp('worker', { ...own.env, WORKER_METRICS_PORT: String(port), LOG_LEVEL: 'info', ...extra });
    workers.push(w);
    await waitFor(
      `the worker on port ${port}`,
      async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok,
      45000,
    ).catch((err) => {
      throw new Error(`${err.message}\nworker output:\n${w.output.join('').slice(-3000)}`);
    });
    return { port, output: w.output };
  };

  it('listens on loopback only unless WORKER_METRICS_HOST says otherwise', async () => {
    // The control: on this machine, a socket bound to every interface does answer on 127.0.0.2.
    const control = net.createServer();
    await new Promise<void>((r) => control.listen(0, '0.0.0.0', r));
    const controlPort = (control.address() as net.AddressInfo).port;
    expect(await answers('127.0.0.2', controlPort)).toBe(true);
    await new Promise((r) => control.close(r));

    const worker = await start({ WORKER_METRICS_HOST: '' }); // unset, as an empty value counts
    expect(await answers('127.0.0.2', worker.port)).toBe(false);
    expect(worker.output.join('')).toContain(`health and metrics on http://127.0.0.1:${worker.port}`);
  });
});
