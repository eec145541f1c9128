import { buildOpenApiDocument } from './openapi/document';
import { ajv, FieldError, toFieldErrors } from './schema-registry';
import { Validation } from './new-plant';

// The admin API's request bodies are validated with the schemas the served document declares for them.
const FULL_DOC_ID = 'https://plant.store/openapi-full.json';
ajv.addSchema({ $id: FULL_DOC_ID, components: { schemas: buildOpenApiDocument().components.schemas } });

export interface SubscriptionCreateBody {
  url: string;
  token?: string;
  secret?: string;
  signature?: 'symmetric' | 'asymmetric';
  description?: string;
  filter?: SubscriptionFilter;
}

/** Which plants a subscriber receives (SubscriptionFilter in /openapi.json). */
export interface SubscriptionFilter {
  tags?: string[];
  plantIds?: { min?: number; max?: number };
}

export interface SubscriptionUpdateBody {
  url?: string;
  token?: string | null;
  enabled?: boolean;
  description?: string;
  filter?: SubscriptionFilter;
}

function validator<T>(name: string) {
  const validate = ajv.getSchema<T>(`${FULL_DOC_ID}#/components/schemas/${name}`)!;
  return (body: unknown): Validation<T> =>
    validate(body)
      ? { ok: true, value: body as T }
      : { ok: false, errors: toFieldErrors(validate.errors) as FieldError[] };
}

export const validateSubscriptionCreate = validator<SubscriptionCreateBody>('SubscriptionCreate');
export const validateSubscriptionUpdate = validator<SubscriptionUpdateBody>('SubscriptionUpdate');

export interface SubscriptionTestBody {
  plant?: { id: number; name: string; tag?: string };
}
export const validateSubscriptionTest = validator<SubscriptionTestBody>('SubscriptionTest');

export interface DeliveryRetryFilterBody {
  subscriptionId?: string;
  plantId?: number;
  since?: string;
  until?: string;
}
export const validateDeliveryRetryFilter = validator<DeliveryRetryFilterBody>('DeliveryRetryFilter');

export interface DeadLetterIdsBody {
  ids: string[];
}
export const validateDeadLetterIds = validator<DeadLetterIdsBody>('DeadLetterIds');
