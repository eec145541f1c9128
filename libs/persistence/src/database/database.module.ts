import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { Pool } from 'pg';
import { APP_CONFIG, APP_NAME } from '@app/config';
import { OPERATIONAL_EVENTS, OUTBOX, PLANT_EVENT_STORE, SUBSCRIBER_HEALTH, SUBSCRIBER_SOURCE } from '@app/delivery';
import { DeliveryRepository } from '../deliveries/delivery.repository';
import { OutboxRepository } from '../deliveries/outbox.repository';
import { IngestRepository } from '../ingest/ingest.repository';
import { PlantRepository } from '../plants/plant.repository';
import { RetentionRepository } from '../retention/retention.repository';
import { SubscriptionRepository } from '../subscriptions/subscription.repository';
import { SubscriberHealthRepository } from '../subscriber-health/subscriber-health.repository';
import { SecretBox, secretBoxFrom } from '../secrets/secret-box';
import { AuditRepository } from '../audit/audit.repository';
import { BackfillRepository } from '../backfills/backfill.repository';
import { DeadLetterRepository } from '../dead-letters/dead-letter.repository';
import { PortalLinkRepository } from '../portal-links/portal-link.repository';
import { OperationalEventRepository } from '../operational/operational-event.repository';
import { createPool, databaseBoundsFrom, longStatementBounds, PG_POOL } from './pool';

interface DbConfig {
  DATABASE_URL: string;
  /** The worker's: the schema owner, which retention needs to drop the delivery log's partitions. */
  DATABASE_MIGRATION_URL?: string;
  DATABASE_POOL_SIZE: number;
  DATABASE_STATEMENT_TIMEOUT_MS: number;
  DATABASE_QUERY_TIMEOUT_MS: number;
  DATABASE_CONNECT_TIMEOUT_MS: number;
  DATABASE_KEEPALIVE_MS: number;
  /** The worker's; the gateway prunes nothing (its pool for retention is never used, so never connects). */
  RETENTION_STATEMENT_TIMEOUT_MS?: number;
  SECRETS_KEY: string;
  SECRETS_PREVIOUS_KEYS: string[];
}

/**
 * Retention's deletes run on a one-connection pool of their own, under RETENTION_STATEMENT_TIMEOUT_MS rather than
 * the general bound: a batch over a long backlog may take longer than an API query ever should. It connects as the
 * schema's owner (DATABASE_MIGRATION_URL, when set): it creates and drops the delivery log's partitions.
 */
export const PG_MAINTENANCE_POOL = Symbol('PG_MAINTENANCE_POOL');

/** The SecretBox sealing subscriber credentials (SECRETS_KEY), for the repositories that store or send them. */
export const SECRET_BOX = Symbol('SECRET_BOX');

const repositories = [
  PlantRepository,
  SubscriptionRepository,
  DeliveryRepository,
  OutboxRepository,
  IngestRepository,
  AuditRepository,
  DeadLetterRepository,
  PortalLinkRepository,
  OperationalEventRepository,
  SubscriberHealthRepository,
  BackfillRepository,
];

/**
 * The pool and the repositories over it, and the storage ports of @app/delivery bound to the repositories that
 * implement them. Imported by each feature module that reads or writes (Nest builds it once); the pool closes last, after the Kafka consumer and the dispatcher have stopped. The schema is
 * not this module's business: the worker migrates it before Nest starts (see libs/persistence/src/schema).
 */
@Module({
  providers: [
    {
      provide: PG_POOL,
      inject: [APP_CONFIG, APP_NAME],
      useFactory: (c: DbConfig, app: string) =>
        createPool({
          url: c.DATABASE_URL,
          max: c.DATABASE_POOL_SIZE,
          applicationName: `plant-store-${app}`,
          ...databaseBoundsFrom(c),
        }),
    },
    {
      provide: PG_MAINTENANCE_POOL,
      inject: [APP_CONFIG, APP_NAME],
      useFactory: (c: DbConfig, app: string) =>
        createPool({
          url: c.DATABASE_MIGRATION_URL ?? c.DATABASE_URL,
          urlVariable: c.DATABASE_MIGRATION_URL ? 'DATABASE_MIGRATION_URL' : 'DATABASE_URL',
          max: 1,
          applicationName: `plant-store-${app}-retention`,
          ...longStatementBounds(
            databaseBoundsFrom(c),
            c.RETENTION_STATEMENT_TIMEOUT_MS ?? 60000,
            'RETENTION_STATEMENT_TIMEOUT_MS',
          ),
        }),
    },
    {
      provide: RetentionRepository,
      inject: [PG_MAINTENANCE_POOL],
      useFactory: (pool: Pool) => new RetentionRepository(pool),
    },
    { provide: SECRET_BOX, inject: [APP_CONFIG], useFactory: (c: DbConfig) => secretBoxFrom(c) },
    ...repositories.map((Repository) => ({
      provide: Repository,
      inject: [PG_POOL, SECRET_BOX],
      useFactory: (pool: Pool, box: SecretBox) => new Repository(pool, box),
    })),
    { provide: PLANT_EVENT_STORE, useExisting: IngestRepository },
    { provide: OUTBOX, useExisting: OutboxRepository },
    { provide: OPERATIONAL_EVENTS, useExisting: OperationalEventRepository },
    { provide: SUBSCRIBER_HEALTH, useExisting: SubscriberHealthRepository },
    { provide: SUBSCRIBER_SOURCE, useExisting: SubscriptionRepository },
  ],
  exports: [
    PG_POOL,
    SECRET_BOX,
    RetentionRepository,
    ...repositories,
    PLANT_EVENT_STORE,
    OUTBOX,
    OPERATIONAL_EVENTS,
    SUBSCRIBER_HEALTH,
    SUBSCRIBER_SOURCE,
  ],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(PG_MAINTENANCE_POOL) private readonly maintenance: Pool,
  ) {}

  async onApplicationShutdown() {
    await Promise.all([this.pool.end(), this.maintenance.end()]);
  }
}
