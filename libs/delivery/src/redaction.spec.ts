import { credentialsOf, redactCredentials, REDACTED, urlForReader, urlOriginAndPath } from './redaction';

describe('redactCredentials', () => {
  const token = 'tok_live_6bQzM3x9';
  const url = 'https://ann:p%40ss-word@hooks.example.com/plants/in?api_key=k3y-0123456789&v=1';
  const redact = (text: string) => redactCredentials(text, credentialsOf({ url, token }));

  it.each([
    ['the token as a header', `{"authorization":"Bearer ${token}"}`, '{"authorization":"[redacted]"}'],
    ['the token alone', `you sent ${token}.`, 'you sent [redacted].'],
    ['the token in base64', `basic ${Buffer.from(token).toString('base64')}`, 'basic [redacted]'],
    ['a query credential', 'GET /plants/in?api_key=k3y-0123456789&v=1', 'GET /plants/in?api_key=[redacted]&v=1'],
    ['a query credential, encoded', `q=${encodeURIComponent('k3y-0123456789')}`, 'q=[redacted]'],
    ['a password, decoded and raw', 'p@ss-word p%40ss-word', '[redacted] [redacted]'],
    ['Basic user-info', `Basic ${Buffer.from('ann:p@ss-word').toString('base64')}`, 'Basic [redacted]'],
    ['a token cut off at the end', `{"authorization":"Bearer ${token.slice(0, 9)}`, `{"authorization":"${REDACTED}`],
  ])('takes out %s', (_case, text, expected) => expect(redact(text)).toBe(expected));

  it('leaves an answer without credentials alone, short query values included', () => {
    expect(redact('{"ok":true,"v":1,"tok":"tok_"}')).toBe('{"ok":true,"v":1,"tok":"tok_"}');
    expect(redactCredentials('thanks', credentialsOf({ url: 'http://h/x', token: null }))).toBe('thanks');
  });

  it('takes out a JSON-escaped token', () => {
    const odd = 'to"k\\en-12345';
    expect(redactCredentials(JSON.stringify({ a: `Bearer ${odd}` }), credentialsOf({ url, token: odd }))).toBe(
      '{"a":"[redacted]"}',
    );
  });
});

describe('subscriber URLs as shown', () => {
  const url = 'https://ann:secret@hooks.example.com/plants/in?api_key=k3y&v=1&sk_live_x#frag';

  it('keeps origin and path for the audit trail', () => {
    expect(urlOriginAndPath(url)).toBe('https://hooks.example.com/plants/in');
  });

  it('shows a reader query names, never values, user-info or fragment', () => {
    expect(urlForReader(url)).toBe('https://hooks.example.com/plants/in?api_key=[redacted]&v=[redacted]&[redacted]');
    expect(urlForReader('http://127.0.0.1:8080/hook')).toBe('http://127.0.0.1:8080/hook');
  });
});
