import { buildOpenApiDocument } from './openapi/document';
import { RESERVED_HEADER_PREFIXES, RESERVED_HEADERS, whyReservedHeader } from './reserved-headers';

describe(whyReservedHeader.name, () => {
  it('knows a reserved name in any case, and every name under a reserved prefix', () => {
    expect(whyReservedHeader('Content-Length')).toMatch(/frames the signed body/);
    expect(whyReservedHeader('PROXY-Authorization')).toMatch(/hop-by-hop/);
    expect(whyReservedHeader('X-Team')).toBeNull();
  });

  it('is the list the served document gives clients, every name and prefix of it', () => {
    const schemas = buildOpenApiDocument().components.schemas as Record<
      string,
      { properties: Record<string, { description: string }> }
    >;
    const names = [...Object.keys(RESERVED_HEADERS), ...RESERVED_HEADER_PREFIXES.map(([p]) => `${p}*`)];
    for (const schema of ['SubscriptionCreate', 'SubscriptionUpdate'])
      for (const field of ['headers', 'secretHeaders'])
        for (const name of names)
          expect({
            schema,
            field,
            name,
            listed: schemas[schema].properties[field].description.includes(`\`${name}\``),
          }).toEqual({ schema, field, name, listed: true });
  });
});
