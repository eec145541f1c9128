import { Controller, Get, Header, Inject } from '@nestjs/common';
import { Pool } from 'pg';
import { ProblemException } from '@app/observability';
import { isDatabaseUp, PG_POOL } from '@app/persistence';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { ConsumerState } from './consumer-state';

/** Served on WORKER_METRICS_PORT: liveness, readiness (consuming and database up) and Prometheus metrics. */
@Controller()
export class WorkerHealthController {
  constructor(
    private readonly consumer: ConsumerState,
    private readonly metrics: WorkerMetrics,
    @Inject(PG_POOL) private readonly pool: Pool,
  ) {}

  @Get('healthz')
  live() {
    return { status: 'ok' };
  }

  @Get('readyz')
  async ready() {
    const database = (await isDatabaseUp(this.pool)) ? 'up' : 'down';
    const consuming = this.consumer.consuming;
    const blocked = [
      ...this.consumer.blocked.values(),
      ...[...this.consumer.stalled].map(([name, why]) => `${name} consumer stuck: ${why}`),
    ];
    if (!consuming || database !== 'up' || blocked.length > 0) {
      const why = blocked.length > 0 ? `; ${blocked.join('; ')}` : '';
      throw ProblemException.of('unavailable', `consuming=${consuming} database=${database}${why}`, {
        consuming,
        database,
        lastError: blocked[0] ?? this.consumer.lastError,
      });
    }
    return { status: 'ready', consuming, database };
  }

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
