import {
  customHeaderProblems,
  HIDDEN_HEADER,
  MAX_CUSTOM_HEADERS,
  MAX_CUSTOM_HEADERS_BYTES,
  mergeCustomHeaders,
} from './custom-headers';
import { credentialsOf, redactCredentials } from './redaction';
import { sentHeaders, webhookHeaders } from './http/webhook-client';

const problems = (plain: Record<string, string>, secret: Record<string, string> = {}, hasToken = false) =>
  customHeaderProblems({ plain, secret }, hasToken);

describe(customHeaderProblems.name, () => {
  it('lets ordinary headers through, plain and secret', () => {
    expect(problems({ 'X-Team': 'plants', 'X-Route': 'eu west\t1' }, { 'X-Api-Key': 'k-123' })).toEqual([]);
    expect(problems({}, { Authorization: 'Basic dTpw' })).toEqual([]); // no token: a Basic credential may go
  });

  it.each([
    'Connection',
    'keep-alive',
    'Proxy-Authorization',
    'proxy-connection',
    'TE',
    'Trailer',
    'Transfer-Encoding',
    'Upgrade',
    'Host',
    'Content-Length',
    'Content-Type',
    'Content-Encoding',
    'Expect',
    'User-Agent',
    'traceparent',
    'webhook-id',
    'Webhook-Timestamp',
    'webhook-signature',
    'webhook-anything',
    'plant-store-hops',
    'plant-store-origin',
    'plant-store-backfill',
    'Cookie',
    'Forwarded',
    'X-Forwarded-For',
    'x-forwarded-host',
    'X-Forwarded-Proto',
  ])('refuses %s, naming it', (name) => {
    const found = problems({ [name]: 'x' });
    expect(found).toHaveLength(1);
    expect(found[0].field).toBe(`headers.${name}`);
    expect(found[0].message).toContain(name);
    expect(problems({}, { [name]: 'x' })[0].field).toBe(`secretHeaders.${name}`);
  });

  it('refuses authorization beside the token, names that are no token, and CR or LF in a value', () => {
    expect(problems({}, { authorization: 'Basic x' }, true)[0].message).toMatch(/has a token/);
    expect(problems({ 'X Bad': 'v' })[0]).toEqual({ field: 'headers.X Bad', message: expect.stringMatching(/name/) });
    expect(problems({ 'X-Bad:': 'v' })[0].field).toBe('headers.X-Bad:');
    for (const v of ['a\r\nX-Injected: 1', 'a\nb', 'a\rb', 'nul\0', 'é'])
      expect(problems({ 'X-Value': v })).toEqual([{ field: 'headers.X-Value', message: expect.stringMatching(/CR/) }]);
  });

  it('refuses the same name twice, whatever its case, plain or secret', () => {
    expect(problems({ 'X-Key': 'a' }, { 'x-key': 'b' })).toEqual([
      { field: 'secretHeaders.x-key', message: 'is the same header as headers.X-Key (names are case-insensitive)' },
    ]);
  });

  it('bounds the count, each name and value, and the total', () => {
    const many = Object.fromEntries(Array.from({ length: MAX_CUSTOM_HEADERS + 1 }, (_, i) => [`X-H${i}`, 'v']));
    expect(problems(many)).toEqual([{ field: 'headers', message: expect.stringMatching(/at most 20/) }]);
    expect(problems({ ['X-' + 'n'.repeat(63)]: 'v' })[0].message).toMatch(/longer than 64/);
    expect(problems({ 'X-Long': 'v'.repeat(1025) })[0].message).toMatch(/longer than 1024/);
    const big = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`X-H${i}`, 'v'.repeat(1000)]));
    expect(problems(big)).toEqual([
      { field: 'headers', message: expect.stringContaining(`at most ${MAX_CUSTOM_HEADERS_BYTES}`) },
    ]);
  });
});

describe(mergeCustomHeaders.name, () => {
  const current = { plain: { 'X-Team': 'plants', 'X-Old': '1' }, secret: { 'X-Api-Key': 'k' } };

  it('sets, replaces and removes (null), keeping what the patch does not name', () => {
    expect(mergeCustomHeaders(current, { plain: { 'X-Old': null, 'x-team': 'trees' } })).toEqual({
      plain: { 'x-team': 'trees' },
      secret: { 'X-Api-Key': 'k' },
    });
    expect(mergeCustomHeaders(current, { secret: { 'X-Api-Key': null, 'X-Other': 's' } })).toEqual({
      plain: current.plain,
      secret: { 'X-Other': 's' },
    });
  });

  it('moves a header set in the other set: one name, one value', () => {
    expect(mergeCustomHeaders(current, { plain: { 'x-api-key': 'public' } })).toEqual({
      plain: { ...current.plain, 'x-api-key': 'public' },
      secret: {},
    });
  });
});

describe('custom headers on the wire and in what an operator sees', () => {
  const signed = { 'webhook-id': 'e1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,sig' };

  it('sends them, under the headers Plant Store sets', () => {
    const h = webhookHeaders(
      signed,
      { hops: 0, originEventId: 'e1', headers: { 'X-Team': 'plants' }, secretHeaders: { 'X-Api-Key': 'sk_123456' } },
      null,
    );
    expect(h).toMatchObject({ 'X-Team': 'plants', 'X-Api-Key': 'sk_123456', 'webhook-signature': 'v1,sig' });
  });

  it('never sends a reserved one stored before its name was reserved, plain or secret', () => {
    const h = webhookHeaders(
      signed,
      {
        hops: 0,
        originEventId: 'e1',
        headers: { 'X-Team': 'plants', Cookie: 'session=1', 'X-Forwarded-For': '10.0.0.1' },
        secretHeaders: { Forwarded: 'for=10.0.0.1', 'X-Api-Key': 'sk_123456' },
      },
      null,
    );
    expect(Object.keys(h).filter((n) => /^(cookie|forwarded|x-forwarded-)/i.test(n))).toEqual([]);
    expect(h).toMatchObject({ 'X-Team': 'plants', 'X-Api-Key': 'sk_123456' });
  });

  it('shows a secret value as a placeholder, and redacts it from an echoed reply', () => {
    const shown = sentHeaders(
      'e1',
      { attemptedAt: new Date(0).toISOString(), signature: 'v1,sig' },
      { hops: 0, originEventId: 'e1' },
      false,
      {
        headers: { 'X-Team': 'plants' },
        secretHeaderNames: ['X-Api-Key'],
      },
    );
    expect(shown).toMatchObject({ 'X-Team': 'plants', 'X-Api-Key': HIDDEN_HEADER });
    const credentials = credentialsOf({
      url: 'https://r.example/',
      token: null,
      secretHeaders: { 'X-Api-Key': 'sk_123456' },
    });
    expect(redactCredentials('{"x-api-key":"sk_123456"}', credentials)).toBe('{"x-api-key":"[redacted]"}');
  });
});
