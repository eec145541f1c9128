import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { buildOpenApiDocument } from '@app/contracts';

/**
 * GET /openapi.json serves the interface document as written (not generated from decorators, so the
 * seed stays exact), and GET /docs renders it with Swagger UI, whose assets are served locally (offline).
 */
export function setupDocs(app: NestFastifyApplication) {
  const document = buildOpenApiDocument() as unknown as OpenAPIObject;
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'openapi.json',
    yamlDocumentUrl: 'openapi.yaml',
    customSiteTitle: 'Plant Store API',
  });
}
