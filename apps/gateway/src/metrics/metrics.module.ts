import { DynamicModule, Module } from '@nestjs/common';
import { GatewayMetrics } from './gateway-metrics';
import { MetricsServer } from './metrics-server';

/**
 * The gateway's metrics. The instance is made before Nest (the HTTP server's connection and client-error
 * counters are wired when the server is created) and provided as it is.
 */
@Module({})
export class MetricsModule {
  static forRoot(metrics: GatewayMetrics): DynamicModule {
    return {
      module: MetricsModule,
      global: true,
      providers: [{ provide: GatewayMetrics, useValue: metrics }, MetricsServer],
      exports: [GatewayMetrics, MetricsServer],
    };
  }
}
