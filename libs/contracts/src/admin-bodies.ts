import { buildOpenApiDocument } from './openapi/document';
import type { Schema } from './openapi/shapes';
import { ajv, firstPerField, toFieldErrors, unstorableFields } from './schema-registry';
import { Validation } from './new-plant';

// The admin API's request bodies are validated with the schemas the served document declares for them.
const FULL_DOC_ID = 'https://plant.store/openapi-full.json';
ajv.addSchema({ $id: FULL_DOC_ID, components: { schemas: buildOpenApiDocument().components.schemas } });

// The request bodies' types are the document's own schemas (./openapi/schemas.ts), through the generated types.
export type SubscriptionCreateBody = Schema<'SubscriptionCreate'>;
/** Which plants a subscriber receives. */
export type SubscriptionFilter = Schema<'SubscriptionFilter'>;
export type SubscriptionUpdateBody = Schema<'SubscriptionUpdate'>;

/**
 * A body's validator: the document's schema, and no text PostgreSQL refuses anywhere in it (property names
 * included), which the New Plant schema checks with its `storable` keyword and these bodies' schemas do not carry.
 */
function validator<T>(name: string) {
  const validate = ajv.getSchema<T>(`${FULL_DOC_ID}#/components/schemas/${name}`)!;
  return (body: unknown): Validation<T> => {
    const valid = validate(body);
    const unstorable = unstorableFields(body);
    if (valid && unstorable.length === 0) return { ok: true, value: body as T };
    return { ok: false, errors: firstPerField([...(valid ? [] : toFieldErrors(validate.errors)), ...unstorable]) };
  };
}

export const validateSubscriptionCreate = validator<SubscriptionCreateBody>('SubscriptionCreate');
export const validateSubscriptionUpdate = validator<SubscriptionUpdateBody>('SubscriptionUpdate');

export type SubscriptionTestBody = Schema<'SubscriptionTest'>;
export const validateSubscriptionTest = validator<SubscriptionTestBody>('SubscriptionTest');

export type BackfillCreateBody = Schema<'BackfillCreate'>;
export const validateBackfillCreate = validator<BackfillCreateBody>('BackfillCreate');

export type DeliveryRetryFilterBody = Schema<'DeliveryRetryFilter'>;
export const validateDeliveryRetryFilter = validator<DeliveryRetryFilterBody>('DeliveryRetryFilter');

export type DeadLetterIdsBody = Schema<'DeadLetterIds'>;
export const validateDeadLetterIds = validator<DeadLetterIdsBody>('DeadLetterIds');

export type PortalLinkCreateBody = Schema<'PortalLinkCreate'>;
export const validatePortalLinkCreate = validator<PortalLinkCreateBody>('PortalLinkCreate');
