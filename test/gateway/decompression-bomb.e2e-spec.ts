import { readFileSync } from 'node:fs';
import zlib from 'node:zlib';
import { ChildProcess } from 'node:child_process';
import { buildOpenApiDocument } from '@app/contracts';
import { exitOf, freePort, spawnReadyGateway } from '../../tools/harness/processes';
import * as e2e from '../../tools/harness/stack';

// Issue 25, "work before authentication": a 53-byte brotli body (64 MiB of spaces, window 24) made the decoder
// allocate a 16 MiB window, and the decoder ran in a preParsing hook, before the bearer guard. Fifty such
// requests at once, with no token, took the gateway from 135 MB to 939 MB RSS, and none was answered 401.
// Replayed here against the built gateway in its own process, whose peak RSS (VmHWM) the kernel reports.
describe('decompression bombs', () => {
  let child: ChildProcess;
  let url: string;

  beforeAll(async () => {
    // The gateway is ready once its topic exists: created here, not left to whichever suite ran before.
    await e2e.prepareTestInfrastructure();
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    ({ child } = await spawnReadyGateway(e2e.baseEnv({ PORT: String(port), HOST: '127.0.0.1' }), url));
  });

  afterAll(async () => {
    if (!child) return;
    child.kill('SIGTERM');
    await exitOf(child);
  });

  const bomb = zlib.brotliCompressSync(Buffer.alloc(64 << 20, ' '), {
    params: { [zlib.constants.BROTLI_PARAM_LGWIN]: 24, [zlib.constants.BROTLI_PARAM_QUALITY]: 5 },
  });
  /** Peak resident memory of the gateway process so far, in MB. */
  const peakRssMb = () =>
    Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) / 1024;

  const fire = (method: string, path: string, token: string | null, count: number) =>
    Promise.all(
      Array.from({ length: count }, async () => {
        const res = await fetch(`${url}${path}`, {
          method,
          headers: {
            'content-type': 'application/json',
            'content-encoding': 'br',
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
          body: bomb,
        });
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        await res.arrayBuffer();
        return res.status;
      }),
    );

  // Every operation of the served document that needs a token and may take a body (path parameters filled with
  // well-formed values), and the webhook, documented under `webhooks`.
  const doc = buildOpenApiDocument() as unknown as {
    security?: unknown[];
    paths: Record<string, Record<string, { security?: unknown[] }>>;
  };
  const routes: [string, string][] = [
    ['POST', '/plant/webhook'],
    ...Object.entries(doc.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(
          ([method, op]) =>
            ['post', 'put', 'patch', 'delete'].includes(method) && (op.security ?? doc.security)?.length,
        )
        .map(([method]): [string, string] => [
          method.toUpperCase(),
          path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000'),
        ]),
    ),
  ];

  it('covers every operation that takes a body behind a token', () => {
    expect(routes.length).toBeGreaterThanOrEqual(10);
    expect(routes).toContainEqual(['PATCH', '/subscriptions/00000000-0000-4000-8000-000000000000']);
  });

  it('is some 50 bytes of brotli that decode to 64 MiB with a 16 MiB window', () => {
    expect(bomb.length).toBeLessThan(100);
    expect((bomb[0] >> 1) & 7).toBe(7); // WBITS 24
  });

  it('answers 50 bombs at once with no token 401 on every route, without reading them (peak RSS flat)', async () => {
    await fire('POST', '/plant/webhook', null, 5); // warm-up: the first requests compile code paths
    const before = peakRssMb();
    for (const [method, path] of routes) expect(new Set(await fire(method, path, null, 50))).toEqual(new Set([401]));
    expect(new Set(await fire('POST', '/no-such-route', null, 50))).toEqual(new Set([404]));
    // Before the fix: +800 MB for the first 50. Decoding nothing, the gateway holds only the sockets.
    expect(peakRssMb() - before).toBeLessThan(64);
  });

  it('answers 50 bombs at once with a token 413, decoding at most the limit with a bounded window', async () => {
    const before = peakRssMb();
    expect(new Set(await fire('POST', '/plant/webhook', e2e.WEBHOOK_TOKEN, 50))).toEqual(new Set([413]));
    expect(new Set(await fire('POST', '/subscriptions', e2e.ADMIN_TOKEN, 50))).toEqual(new Set([413]));
    expect(peakRssMb() - before).toBeLessThan(64);
    // And a decoded body within the limit still goes through (the lowered window changes nothing for it).
    const plant = zlib.brotliCompressSync(Buffer.from(JSON.stringify({ id: e2e.plantIds()(), name: 'Compressed' })));
    const res = await fetch(`${url}/plant/webhook`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-encoding': 'br',
        authorization: `Bearer ${e2e.WEBHOOK_TOKEN}`,
      },
      body: plant,
    });
    expect(res.status).toBe(200);
  });
});
