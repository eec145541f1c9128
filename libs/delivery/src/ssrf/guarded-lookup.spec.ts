import dns from 'node:dns';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { BlockedAddressError, guardedLookup } from './guarded-lookup';

type Answer = dns.LookupAddress[];
const resolverAnswering = (...answers: Answer[]) => {
  let n = 0;
  return ((_host: string, _opts: unknown, cb: (e: Error | null, a: Answer) => void) =>
    cb(null, answers[Math.min(n++, answers.length - 1)])) as unknown as typeof dns.lookup;
};
const run = (lookup: ReturnType<typeof guardedLookup>, all: boolean) =>
  new Promise<{ err: Error | null; result: unknown }>((resolve) =>
    lookup('hooks.example.com', { all }, (err, address) => resolve({ err, result: address })),
  );

describe(guardedLookup.name, () => {
  it('passes public addresses through, in the form Node asked for', async () => {
    const lookup = guardedLookup(resolverAnswering([{ address: '8.8.8.8', family: 4 }]));
    expect(await run(lookup, false)).toEqual({ err: null, result: '8.8.8.8' });
    expect(await run(lookup, true)).toEqual({ err: null, result: [{ address: '8.8.8.8', family: 4 }] });
  });

  it('refuses when any answer is private, so a rebinding answer cannot slip in at connect time', async () => {
    // First answer public (what a check at save time would see), second private (what the socket would get).
    const lookup = guardedLookup(
      resolverAnswering(
        [{ address: '8.8.8.8', family: 4 }],
        [
          { address: '8.8.8.8', family: 4 },
          { address: '169.254.169.254', family: 4 },
        ],
      ),
    );
    expect((await run(lookup, false)).err).toBeNull();
    const second = await run(lookup, false);
    expect(second.err).toBeInstanceOf(BlockedAddressError);
    expect(second.err!.message).toMatch(/169\.254\.169\.254/);
  });

  it('is what the socket uses: a real request to a name that resolves to loopback never connects', async () => {
    let connections = 0;
    const server = http.createServer((_req, res) => res.end('reached')).on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const err = await new Promise<Error>((resolve) => {
      http
        .get({ host: 'localhost', port, path: '/', lookup: guardedLookup(), agent: false }, () =>
          resolve(new Error('connected')),
        )
        .on('error', resolve);
    });
    await new Promise((r) => server.close(r));
    expect(err).toBeInstanceOf(BlockedAddressError);
    expect(connections).toBe(0);
  });
});
