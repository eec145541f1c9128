import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { GENERATED, REGENERATE, renderApiSchema, ROOT } from '../../tools/api-client/render';

// One source for every API shape: the generated types follow the document, and nothing else declares a shape.
describe('the generated API types', () => {
  it(`match the served document (else run \`${REGENERATE}\`)`, () => {
    expect(readFileSync(GENERATED, 'utf8') === renderApiSchema()).toBe(true);
  });

  it('are the only declaration of a response shape in the console and the gateway DTOs', () => {
    const dir = (d: string) =>
      readdirSync(path.join(ROOT, d), { recursive: true, encoding: 'utf8' })
        .filter((f) => /\.(ts|tsx)$/.test(f))
        .map((f) => path.join(d, f));
    const files = [...dir('apps/console/src'), ...dir('apps/gateway/src').filter((f) => f.endsWith('.dto.ts'))];
    // A hand-written interface with an id, a status or a date is a copy of a document schema.
    const copies = files.filter((f) =>
      /interface \w+ \{[^}]*\b(id|status|createdAt|updatedAt)\??:/s.test(readFileSync(path.join(ROOT, f), 'utf8')),
    );
    expect(copies).toEqual([]);
  });
});
