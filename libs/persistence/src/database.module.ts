import { Global, Inject, Module, OnApplicationShutdown, OnModuleInit, Logger } from '@nestjs/common';
import { Pool } from 'pg';
import { APP_CONFIG } from '@app/config';
import { createPool, PG_POOL } from './database';
import { runMigrations } from './migrate';
import { PlantRepository } from './plant.repository';
import { SubscriptionRepository } from './subscription.repository';
import { DeliveryRepository } from './delivery.repository';

interface DbConfig {
  DATABASE_URL: string;
  DATABASE_POOL_SIZE: number;
}

export const APP_NAME = Symbol('APP_NAME');

/** The pool both apps use, migrated at start-up and closed last (after Kafka consumers have stopped). */
@Global()
@Module({
  providers: [
    {
      provide: PG_POOL,
      inject: [APP_CONFIG, APP_NAME],
      useFactory: (c: DbConfig, app: string) => createPool(c.DATABASE_URL, c.DATABASE_POOL_SIZE, `plant-store-${app}`),
    },
    { provide: PlantRepository, inject: [PG_POOL], useFactory: (pool: Pool) => new PlantRepository(pool) },
    { provide: SubscriptionRepository, inject: [PG_POOL], useFactory: (pool: Pool) => new SubscriptionRepository(pool) },
    { provide: DeliveryRepository, inject: [PG_POOL], useFactory: (pool: Pool) => new DeliveryRepository(pool) },
  ],
  exports: [PG_POOL, PlantRepository, SubscriptionRepository, DeliveryRepository],
})
export class DatabaseModule implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Database');

  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  static forApp(app: string) {
    return { module: DatabaseModule, providers: [{ provide: APP_NAME, useValue: app }], exports: [APP_NAME] };
  }

  async onModuleInit() {
    const applied = await runMigrations(this.pool, (m) => this.logger.log(`applying ${m}`));
    this.logger.log(applied.length ? `applied migrations ${applied.join(', ')}` : 'schema is up to date');
  }

  async onApplicationShutdown() {
    await this.pool.end();
  }
}
