import { Global, Module } from '@nestjs/common';
import { GatewayMetrics } from './gateway-metrics';
import { MetricsController } from './metrics.controller';

@Global()
@Module({ providers: [GatewayMetrics], controllers: [MetricsController], exports: [GatewayMetrics] })
export class MetricsModule {}
