import { operations } from './operations';
import { addedSchemas } from './schemas';
import { seedDocument } from './seed';

export type OpenApiDocument = typeof seedDocument;

/**
 * The document /openapi.json serves: the seed, plus the operations Plant Store adds under `paths`, their
 * schemas and the admin bearer scheme. The seed's own members are never rewritten.
 */
export function buildOpenApiDocument(): OpenApiDocument {
  const doc = structuredClone(seedDocument);
  doc.paths = structuredClone(operations);
  Object.assign(doc.components.schemas, structuredClone(addedSchemas));
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
      '403. An expired or revoked link, or one whose subscription was deleted, answers 401 saying which.',
  };
  return doc;
}
