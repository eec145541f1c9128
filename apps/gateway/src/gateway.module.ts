import { DynamicModule, Module } from '@nestjs/common';
import { ConfigModule, gatewayEnvSchema } from '@app/config';
import { DatabaseModule } from '@app/persistence';
import { AuthModule } from './auth/auth.module';
import { HealthModule } from './health/health.module';
import { MetricsModule } from './metrics/metrics.module';
import { PlantWebhookModule } from './plant-webhook/plant-webhook.module';
import { PlantsModule } from './plants/plants.module';
import { SubscriptionsModule } from './subscriptions/subscriptions.module';
import { DeliveriesModule } from './deliveries/deliveries.module';

/** Webhook in (plant-webhook), read API (plants), admin API (subscriptions, deliveries), health and metrics. */
@Module({})
export class GatewayModule {
  static forRoot(env: NodeJS.ProcessEnv = process.env): DynamicModule {
    return {
      module: GatewayModule,
      imports: [
        ConfigModule.forRoot(gatewayEnvSchema, env),
        DatabaseModule.forApp('gateway'),
        MetricsModule,
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
