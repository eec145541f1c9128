import type { FastifyRequest } from 'fastify';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { buildOpenApiDocument } from '@app/contracts';

/**
 * GET /openapi.json serves the interface document as written (not generated from decorators, so the
 * seed stays exact), and GET /docs renders it with Swagger UI, whose assets are served locally (offline).
 *
 * "Try it out" calls the seed's server, `http://{baseUrl}`. Its variable defaults to `localhost:3000`, which
 * is not where a page loaded from 127.0.0.1:8080 lives, and the browser blocks the cross-origin call. The page's
 * own copy of the document (swagger-ui-init.js) therefore defaults `baseUrl` to the host the page was loaded
 * from; /openapi.json itself stays exactly the seed's.
 */
export function setupDocs(app: NestFastifyApplication) {
  const document = buildOpenApiDocument() as unknown as OpenAPIObject;
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'openapi.json',
    yamlDocumentUrl: 'openapi.yaml',
    customSiteTitle: 'Plant Store API',
    patchDocumentOnRequest: (req, _res, doc) => {
      const request = req as FastifyRequest;
      if (!request.url.endsWith('swagger-ui-init.js') || !request.headers.host) return doc;
      const patched = structuredClone(doc);
      const variable = patched.servers?.[0]?.variables?.baseUrl;
      if (variable) variable.default = request.headers.host;
      return patched;
    },
  });
}

/** GET /: where to go from here, for a person who typed the gateway's address. */
export const INDEX = {
  service: 'Plant Store',
  links: {
    console: { href: '/console', title: 'The operator console (sign in with an admin token)' },
    docs: { href: '/docs', title: 'API documentation with Try it out' },
    openapi: { href: '/openapi.json', title: 'The OpenAPI 3.1 document' },
    webhook: { href: '/plant/webhook', title: 'POST a New Plant here (Authorization: Bearer <webhook token>)' },
    health: { href: '/readyz', title: 'Readiness' },
  },
};
