import { validateSubscriptionCreate, validateSubscriptionUpdate } from './admin-bodies';

describe('subscription bodies: what is kept and forwarded on every delivery is bounded', () => {
  const url = 'https://example.com/hook';

  it.each([
    ['a URL over 2048 characters', { url: `${url}/${'p'.repeat(2048)}` }, 'url'],
    ['a token over 1024 characters', { url, token: 't'.repeat(1025) }, 'token'],
    ['a token with a space', { url, token: 'two words' }, 'token'],
    ['a token with a line break', { url, token: 'line\r\nbreak' }, 'token'],
    ['a token beyond ASCII', { url, token: 'caf\u00e9-token' }, 'token'],
  ])('refuses %s, naming the field', (_case, body, field) => {
    for (const validate of [validateSubscriptionCreate, validateSubscriptionUpdate])
      expect(validate(body)).toMatchObject({ ok: false, errors: [{ field }] });
  });

  it('takes both at their bounds', () => {
    const body = { url: `${url}/${'p'.repeat(2048 - url.length - 1)}`, token: 't'.repeat(1024) };
    expect(body.url).toHaveLength(2048);
    expect(validateSubscriptionCreate(body).ok).toBe(true);
    expect(validateSubscriptionUpdate({ ...body, token: null }).ok).toBe(true);
  });
});

describe('admin bodies: text PostgreSQL refuses is refused by the validator itself', () => {
  it.each([
    ['a NUL in a value', { url: 'https://example.com/hook', description: 'a\u0000b' }, 'description'],
    ['a lone surrogate in a value', { url: 'https://example.com/hook', description: 'a\ud800' }, 'description'],
    ['a NUL in a property name', { url: 'https://example.com/hook', 'x\u0000': 1 }, 'x\\u0000'],
  ])('refuses %s, naming the field once', (_case, body, field) => {
    const result = validateSubscriptionCreate(body);
    expect(result.ok).toBe(false);
    const errors = result.ok ? [] : result.errors;
    expect(errors.filter((e) => e.field === field)).toHaveLength(1);
  });

  it('puts the schema complaint first where a field has both', () => {
    const result = validateSubscriptionCreate({ url: 'not a url\u0000' });
    expect(result).toMatchObject({ ok: false, errors: [{ field: 'url' }] });
    expect(result.ok || result.errors[0].message).not.toMatch(/NUL/);
  });
});
