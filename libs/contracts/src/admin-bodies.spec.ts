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
