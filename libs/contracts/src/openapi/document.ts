import { OPERATIONAL_EVENT_TYPES, OperationalEventType, operationalSchemaNames } from '../operational-events';
import { operations } from './operations';
import { addedSchemas } from './schemas';
import { seedDocument } from './seed';

export type OpenApiDocument = typeof seedDocument;

/**
 * The document /openapi.json serves: the seed, plus the operations Plant Store adds under `paths`, their
 * schemas and the admin bearer scheme, and its operational webhooks under `webhooks` beside New Plant. The
 * seed's own members are never rewritten.
 */
export function buildOpenApiDocument(): OpenApiDocument {
  const doc = structuredClone(seedDocument);
  doc.paths = structuredClone(operations);
  Object.assign(doc.components.schemas, structuredClone(addedSchemas));
  Object.assign(doc.webhooks, operationalWebhooks());
  doc.components.securitySchemes.adminAuth = {
    type: 'http',
    scheme: 'bearer',
    description:
      'A token from ADMIN_TOKENS; webhook tokens are not accepted here. Each token has a scope: `read` lists and ' +
      'inspects, `write` also changes. An operation lists the scope it needs; a token without it gets 403.',
  };
  doc.components.securitySchemes.portalAuth = {
    type: 'http',
    scheme: 'bearer',
    description:
      "A portal link's token (`psp_…`, from `POST /subscriptions/{id}/portal-links`): the subscriber's own " +
      'credential for one subscription, expiring and revocable. It is accepted only by the operations whose ' +
      '`security` lists `portalAuth`, and there only for its own subscription: that subscription (read; change its ' +
      'URL, token, description, enabled), its deliveries with every attempt, a test send, rotating its secret, ' +
      'retrying its failed deliveries. Every other operation, and another subscription or its deliveries, answers ' +
      '403. An expired or revoked link, or one whose subscription was deleted, answers 401 saying which. What it ' +
      'calls that is not a read is bounded per link (PORTAL_LINK_CHANGES_BURST at once, then ' +
      'PORTAL_LINK_CHANGES_PER_MINUTE): past it, 429 with Retry-After, and nothing is done.',
  };
  return doc;
}

/** Standard Webhooks' headers, sent with every delivery, operational or New Plant. */
const signatureHeaders = [
  ['webhook-id', 'The message id, the same on every retry (de-duplicate on it)'],
  ['webhook-timestamp', 'Unix seconds when this attempt was signed'],
  [
    'webhook-signature',
    "`v1,<base64 HMAC-SHA256>` with the subscription's `whsec_` secret (`v1a,` Ed25519 for an asymmetric one); " +
      'two, space-separated, while a rotated-out secret still signs',
  ],
].map(([name, description]) => ({ name, in: 'header', required: true, description, schema: { type: 'string' } }));

/** One webhook per operational event type: what an operational subscription (`kind: operational`) receives. */
function operationalWebhooks(): Record<string, unknown> {
  const camel = (type: OperationalEventType) => type.replace(/[._](\w)/g, (_, c: string) => c.toUpperCase());
  return Object.fromEntries(
    OPERATIONAL_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `${camel(type)}Webhook`,
          summary: `Operational event ${type}`,
          description:
            `Sent to each operational subscription that receives ${type}, signed, retried and listed like any ` +
            'delivery. The body is `{type, timestamp, data}`.',
          parameters: signatureHeaders,
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: { $ref: `#/components/schemas/${operationalSchemaNames(type).event}` } },
            },
          },
          responses: {
            '200': { description: 'Any 2xx: received' },
            '410': { description: 'Gone: the operational subscription is disabled' },
          },
        },
      },
    ]),
  );
}
