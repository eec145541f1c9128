import net from 'node:net';

/**
 * A TCP pass-through to a real server that a test can cut and restore: while down, it refuses new
 * connections and drops open ones, which is what a client sees when the server goes away.
 */
export class TcpProxy {
  private server: net.Server | null = null;
  private sockets = new Set<net.Socket>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async up(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    this.sockets.forEach((s) => s.destroy());
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}

/** DATABASE_URL with its host and port replaced by the proxy's. */
export function viaProxy(databaseUrl: string, proxy: TcpProxy): string {
  const u = new URL(databaseUrl);
  u.hostname = '127.0.0.1';
  u.port = String(proxy.port);
  return u.toString();
}
