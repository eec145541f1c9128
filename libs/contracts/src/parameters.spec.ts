import { buildOpenApiDocument } from './openapi/document';
import { parameterParser } from './parameters';

// Every date and number parameter of every operation, found in the served document: the class, not one route.
const parameters = Object.values(buildOpenApiDocument().paths as Record<string, Record<string, unknown>>).flatMap(
  (item) =>
    Object.values(item as Record<string, { operationId?: string; parameters?: { name: string; schema: object }[] }>)
      .filter((op) => op.operationId)
      .flatMap((op) => (op.parameters ?? []).map((p) => ({ operationId: op.operationId!, ...p }))),
);
const withSchema = (match: (s: Record<string, unknown>) => boolean) =>
  parameters.filter((p) => match(p.schema as Record<string, unknown>)).map((p) => [p.operationId, p.name] as const);

describe('parameterParser: dates that are real instants', () => {
  const dates = withSchema((s) => s.format === 'date-time');
  it('finds the date parameters', () => expect(dates.length).toBeGreaterThanOrEqual(5));

  it.each(dates)('%s %s: refuses what is no instant, naming the parameter', (op, name) => {
    const parse = parameterParser(op, name);
    for (const raw of [
      '2016-12-31T23:59:60Z', // a leap second: RFC 3339 grammar, but no Date
      '2016-12-31T23:59:60+00:00',
      '2015-06-30T23:59:60Z',
      '2021-02-29T00:00:00Z',
      '2021-13-01T00:00:00Z',
      'yesterday',
    ])
      expect({ raw, result: parse(raw) }).toEqual({
        raw,
        result: { ok: false, errors: [{ field: name, message: expect.stringMatching(/date-time|required/) }] },
      });
    expect(parse('2016-12-31T23:59:59.999Z')).toEqual({ ok: true, value: '2016-12-31T23:59:59.999Z' });
    expect(parse('2024-02-29T12:00:00+05:30').ok).toBe(true);
  });
});

describe('parameterParser: integers read exactly', () => {
  const integers = withSchema((s) => s.type === 'integer');
  it('finds the integer parameters', () => expect(integers.length).toBeGreaterThanOrEqual(5));

  it.each(integers)('%s %s: refuses digits beyond 2^53 - 1 rather than reading them rounded', (op, name) => {
    const parse = parameterParser(op, name);
    for (const raw of ['9007199254740993', '-9007199254740993', '99999999999999999999'])
      expect(parse(raw)).toEqual({ ok: false, errors: [{ field: name, message: expect.any(String) }] });
  });
});
