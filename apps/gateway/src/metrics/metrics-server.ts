import http from 'node:http';
import { AddressInfo } from 'node:net';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, GatewayConfig } from '@app/config';
import { GatewayMetrics } from './gateway-metrics';

/**
 * /metrics on its own port (METRICS_PORT), not on the public one: Prometheus reaches it inside the cluster,
 * the senders of webhooks do not (the NetworkPolicy admits only the gateway's public port from outside).
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MetricsServer.name);
  private server: http.Server | null = null;

  constructor(
    private readonly metrics: GatewayMetrics,
    @Inject(APP_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async onApplicationBootstrap() {
    this.server = http.createServer((req, res) => {
      if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('only GET /metrics here\n');
        return;
      }
      this.metrics.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': this.metrics.registry.contentType }).end(text),
        (err) => res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err)),
      );
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject).listen(this.config.METRICS_PORT, this.config.METRICS_HOST, resolve);
    });
    this.logger.log(`metrics on http://${this.config.METRICS_HOST}:${this.port}/metrics`);
  }

  get port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? 0;
  }

  async onApplicationShutdown() {
    this.server?.closeAllConnections();
    await new Promise((r) => (this.server ? this.server.close(r) : r(undefined)));
  }
}
