import { Module } from '@nestjs/common';
import { WorkerMetrics } from './worker-metrics';

/** The worker's Prometheus registry and its instruments; imported by each module that counts (one instance). */
@Module({ providers: [WorkerMetrics], exports: [WorkerMetrics] })
export class MetricsModule {}
