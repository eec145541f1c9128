// `npm run generate:api-client`: rewrites libs/contracts/src/openapi/schema.generated.ts from the OpenAPI document.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { GENERATED, renderApiSchema, ROOT } from './render';

writeFileSync(GENERATED, renderApiSchema());
console.log(`wrote ${path.relative(ROOT, GENERATED)}`);
