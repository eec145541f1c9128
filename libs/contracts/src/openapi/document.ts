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
  return doc;
}
