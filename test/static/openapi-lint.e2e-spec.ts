import { execFileSync } from 'node:child_process';
import { buildOpenApiDocument, seedDocument } from '@app/contracts';

// Redocly's recommended rules over the document /openapi.json serves. Our part (the operations under `paths`,
// the operational webhooks beside New Plant, the schemas and the admin scheme we add) lints clean, warnings
// included. The seed's own members are kept
// exactly as given, so what the rules say of them is listed here, not "fixed".

const SEED_PROBLEMS = [
  'info-license-strict #/info/license',
  'operation-operationId #/webhooks/~1plant~1webhook/post/operationId',
  'operation-summary #/webhooks/~1plant~1webhook/post/summary',
  'no-unused-components #/components/schemas/Error',
];

const seedPointer = (pointer: string) =>
  ['#/info', '#/servers', '#/security', '#/webhooks/~1plant~1webhook', '#/components/securitySchemes/bearerAuth'].some(
    (p) => pointer.startsWith(p),
  ) || Object.keys(seedDocument.components.schemas).some((name) => pointer.startsWith(`#/components/schemas/${name}`));

describe('the served OpenAPI document under Redocly lint (recommended)', () => {
  it('reports nothing on our part, and only the known remarks on the seed', () => {
    const output = execFileSync('node', [require.resolve('../../tools/harness/redocly-lint.mjs')], {
      input: JSON.stringify(buildOpenApiDocument()),
    });
    const found = JSON.parse(output.toString()) as { rule: string; pointer: string; message: string }[];
    expect(found.filter((p) => !seedPointer(p.pointer))).toEqual([]);
    expect(found.map((p) => `${p.rule} ${p.pointer}`).sort()).toEqual([...SEED_PROBLEMS].sort());
  });
});
