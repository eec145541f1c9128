import { DynamicModule, Module } from '@nestjs/common';
import { ConfigModule, GatewayConfig } from '@app/config';
import { DatabaseModule } from '@app/persistence';
import { AuthModule } from './auth/auth.module';
import { HealthModule } from './health/health.module';
import { GatewayMetrics } from './metrics/gateway-metrics';
import { MetricsModule } from './metrics/metrics.module';
import { PlantWebhookModule } from './plant-webhook/plant-webhook.module';
import { PlantsModule } from './plants/plants.module';
import { SubscriptionsModule } from './subscriptions/subscriptions.module';
import { DeliveriesModule } from './deliveries/deliveries.module';

/** Webhook in (plant-webhook), read API (plants), admin API (subscriptions, deliveries), health and metrics. */
@Module({})
export class GatewayModule {
  static forRoot(config: GatewayConfig, metrics: GatewayMetrics): DynamicModule {
    return {
      module: GatewayModule,
      imports: [
        ConfigModule.withConfig(config),
        DatabaseModule.forApp('gateway'),
        MetricsModule.forRoot(metrics),
        AuthModule,
        PlantWebhookModule,
        HealthModule,
        PlantsModule,
        SubscriptionsModule,
        DeliveriesModule,
      ],
    };
  }
}
