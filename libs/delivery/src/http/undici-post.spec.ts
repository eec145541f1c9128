import http from 'node:http';
import { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { undiciTransport } from './undici-post';

// The agents kept for receivers' own TLS settings are bounded (MAX_TLS_AGENTS, 64): one more closes the least
// recently used, and nothing else. Plain HTTP here: each setting still has its agent, whose TLS goes unused.
describe('undiciTransport', () => {
  let server: http.Server;
  let url = '';
  beforeAll(async () => {
    server = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(202).end()));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });

  it('keeps at most 64 TLS agents, closing the least recently used one and no other', async () => {
    const close = jest.spyOn(Agent.prototype, 'close');
    // The agents closed (undici's close() without a callback calls itself again with one: counted once).
    const closed = () => new Set(close.mock.contexts).size;
    const transport = undiciTransport(true);
    const post = (i: number) => transport.post(url, {}, '{}', 5000, 1024, { ca: `ca-${i}` });
    try {
      for (let i = 0; i < 64; i++) expect((await post(i)).status).toBe(202);
      await post(0); // its agent again, now the most recently used: 1 is the least
      expect(closed()).toBe(0);
      await post(64);
      expect(closed()).toBe(1);
      expect((await post(0)).status).toBe(202); // kept, and open: a closed agent refuses to dispatch
      expect(closed()).toBe(1);
      await transport.close();
      expect(closed()).toBe(1 + 64 + 1); // then the 64 kept, and the one for plain receivers
    } finally {
      close.mockRestore();
    }
  });
});
