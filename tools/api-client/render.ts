// The admin API client's types, rendered from the very document the gateway serves at /openapi.json
// (buildOpenApiDocument) by openapi-typescript. One source: the schemas in libs/contracts; the gateway's DTOs,
// the console and the CLI all read these types, so a shape changes in one place.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildOpenApiDocument } from '@app/contracts';

export const ROOT = path.resolve(__dirname, '../..');
export const GENERATED = path.join(ROOT, 'libs/contracts/src/openapi/schema.generated.ts');
export const REGENERATE = 'npm run generate:api-client';

const HEADER = `// Generated from the OpenAPI document (libs/contracts/src/openapi) by openapi-typescript: do not edit.\n// Regenerate with \`${REGENERATE}\`; a static test fails while this file is stale.\n`;

/** The generated module's text. openapi-typescript is an ES module with a CLI: run it on the document. */
export function renderApiSchema(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'plant-store-openapi-'));
  try {
    const doc = path.join(dir, 'openapi.json');
    writeFileSync(doc, JSON.stringify(buildOpenApiDocument()));
    const bin = path.join(ROOT, 'node_modules/openapi-typescript/bin/cli.js');
    const out = execFileSync(process.execPath, [bin, doc, '--alphabetize', '--default-non-nullable', 'false'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    return HEADER + out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
