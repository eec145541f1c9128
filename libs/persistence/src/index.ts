// PostgreSQL: the pool and its module (database/), the schema and its one migrator (schema/), one folder per
// aggregate (plants/, subscriptions/, deliveries/ with the outbox, dead-letters/, audit/, portal-links/), the ingest statement
// that writes several tables at once (ingest/), what prunes old rows (retention/), how subscriber credentials
// are sealed at rest (secrets/), and the coalescer that lets concurrent callers share a statement
// (write-coalescer). Every statement is once, in its area's .sql file with named parameters (sql/sql-file.ts),
// listed in sql/statements.ts; rules several statements share are SQL functions and views (schema/migrations).
// Repositories return rows or the delivery domain's types, never API shapes.
export * from './database/pool';
export * from './database/tls';
export * from './database/unavailable';
export * from './database/database.module';
export * from './schema/migrate';
export { migrations, type Migration } from './schema/migrations';
export * from './plants/plant.repository';
export * from './subscriptions/subscription.repository';
export * from './subscriber-health/subscriber-health.repository';
export * from './backfills/backfill.repository';
export * from './deliveries/delivery.repository';
export * from './deliveries/outbox.repository';
export * from './ingest/ingest.repository';
export * from './retention/retention.repository';
export * from './secrets/secret-box';
export * from './secrets/seal-credentials';
export * from './audit/audit.repository';
export * from './dead-letters/dead-letter.repository';
export * from './portal-links/portal-link.repository';
export * from './operational/operational-event.repository';
export * from './write-coalescer';
export * from './subscriptions/subscription-changes';
