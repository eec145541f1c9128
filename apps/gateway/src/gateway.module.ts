import { DynamicModule, Module } from '@nestjs/common';
import { ConfigModule, GatewayConfig } from '@app/config';
import { Tracing, TracingModule } from '@app/observability';
import { AuthModule } from './auth/auth.module';
import { DeliveriesModule } from './deliveries/deliveries.module';
import { HealthModule } from './health/health.module';
import { LifecycleModule } from './lifecycle/lifecycle.module';
import { GatewayMetrics } from './metrics/gateway-metrics';
import { MetricsModule } from './metrics/metrics.module';
import { PlantWebhookModule } from './plant-webhook/plant-webhook.module';
import { PlantsModule } from './plants/plants.module';
import { SubscriptionsModule } from './subscriptions/subscriptions.module';
import { BackfillsModule } from './backfills/backfills.module';
import { AuditModule } from './audit/audit.module';
import { DeadLettersModule } from './dead-letters/dead-letters.module';
import { OverviewModule } from './overview/overview.module';
import { PortalLinksModule } from './portal-links/portal-links.module';

/** Webhook in (plant-webhook), read API (plants), admin API (subscriptions, deliveries,
 * portal links: a subscriber's own scoped credential), health and metrics. */
@Module({})
export class GatewayModule {
  static forRoot(config: GatewayConfig, metrics: GatewayMetrics, tracing: Tracing): DynamicModule {
    return {
      module: GatewayModule,
      imports: [
        ConfigModule.withConfig(config, 'gateway'),
        MetricsModule.forRoot(metrics),
        TracingModule.forRoot(tracing),
        LifecycleModule,
        AuthModule,
        PlantWebhookModule,
        HealthModule,
        PlantsModule,
        SubscriptionsModule,
        BackfillsModule,
        AuditModule,
        DeliveriesModule,
        DeadLettersModule,
        OverviewModule,
        PortalLinksModule,
      ],
    };
  }
}
