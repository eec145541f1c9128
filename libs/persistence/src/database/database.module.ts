import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { Pool } from 'pg';
import { APP_CONFIG, APP_NAME } from '@app/config';
import { DeliveryRepository } from '../deliveries/delivery.repository';
import { OutboxRepository } from '../deliveries/outbox.repository';
import { IngestRepository } from '../ingest/ingest.repository';
import { PlantRepository } from '../plants/plant.repository';
import { RetentionRepository } from '../retention/retention.repository';
import { SubscriptionRepository } from '../subscriptions/subscription.repository';
import { SecretBox, secretBoxFrom } from '../secrets/secret-box';
import { AuditRepository } from '../audit/audit.repository';
import { DeadLetterRepository } from '../dead-letters/dead-letter.repository';
import { createPool, PG_POOL } from './pool';

interface DbConfig {
  DATABASE_URL: string;
  DATABASE_POOL_SIZE: number;
  SECRETS_KEY: string;
  SECRETS_PREVIOUS_KEYS: string[];
}

/** The SecretBox sealing subscriber credentials (SECRETS_KEY), for the repositories that store or send them. */
export const SECRET_BOX = Symbol('SECRET_BOX');

const repositories = [
  PlantRepository,
  SubscriptionRepository,
  DeliveryRepository,
  OutboxRepository,
  IngestRepository,
  RetentionRepository,
  AuditRepository,
  DeadLetterRepository,
];

/**
 * The pool and the repositories over it. Imported by each feature module that reads or writes (Nest builds
 * it once); the pool closes last, after the Kafka consumer and the dispatcher have stopped. The schema is
 * not this module's business: the worker migrates it before Nest starts (see libs/persistence/src/schema).
 */
@Module({
  providers: [
    {
      provide: PG_POOL,
      inject: [APP_CONFIG, APP_NAME],
      useFactory: (c: DbConfig, app: string) => createPool(c.DATABASE_URL, c.DATABASE_POOL_SIZE, `plant-store-${app}`),
    },
    { provide: SECRET_BOX, inject: [APP_CONFIG], useFactory: (c: DbConfig) => secretBoxFrom(c) },
    ...repositories.map((Repository) => ({
      provide: Repository,
      inject: [PG_POOL, SECRET_BOX],
      useFactory: (pool: Pool, box: SecretBox) => new Repository(pool, box),
    })),
  ],
  exports: [PG_POOL, SECRET_BOX, ...repositories],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async onApplicationShutdown() {
    await this.pool.end();
  }
}
