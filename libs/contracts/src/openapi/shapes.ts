// The shapes of the served document as TypeScript types, generated from it (schema.generated.ts): the gateway's
// DTOs, the admin request bodies and the typed client (libs/api-client) all name them from here, so a shape is
// written once, in ./schemas.ts, and every copy follows it.
import type { components, operations, paths } from './schema.generated';

export type { components, operations, paths };

/** A schema of the document by name: `Schema<'Subscription'>` is what GET /subscriptions/{id} returns. */
export type Schema<N extends keyof components['schemas']> = components['schemas'][N];
