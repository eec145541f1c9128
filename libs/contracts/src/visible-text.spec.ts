import { fc } from '@fast-check/jest';
import { visibleJson, visibleLine, visibleText } from './visible-text';

// What issue 36 found reaching an operator's terminal: a description set through a portal link that retitles the
// window and clears the screen, and a receiver's reply.
const DESCRIPTION = '\x1b]0;you have been pwned\x07\x1b[2J';
const REPLY = 'ok\x1b[1A\x1b[2K\r\x9b31mdelivered\x7f\x08';
/** Any character a terminal obeys: C0 (tab and line feed aside, where said), DEL and C1. */
// eslint-disable-next-line no-control-regex -- finding control characters is the test
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;
// eslint-disable-next-line no-control-regex -- as above
const CONTROL_OR_LINE = /[\x00-\x1f\x7f-\x9f]/;

describe(visibleText.name, () => {
  it('shows every control character as an escape, so the terminal prints it instead of obeying it', () => {
    expect(visibleText(DESCRIPTION)).toBe('\\x1b]0;you have been pwned\\x07\\x1b[2J');
    expect(visibleText(REPLY)).toBe('ok\\x1b[1A\\x1b[2K\\x0d\\x9b31mdelivered\\x7f\\x08');
  });

  it('keeps line feeds and tabs, the layout of a body or a reply, and every other character', () => {
    expect(visibleText('{\n\t"name": "Fern 🌿 \\u001b é"\n}')).toBe('{\n\t"name": "Fern 🌿 \\u001b é"\n}');
  });

  it('leaves nothing a terminal obeys, whatever the text, and changes text without one not at all', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const shown = visibleText(s);
        expect(shown).not.toMatch(CONTROL);
        expect(visibleText(shown)).toBe(shown);
        if (!CONTROL.test(s)) expect(shown).toBe(s);
      }),
    );
  });
});

describe(visibleLine.name, () => {
  it('shows line feeds and tabs too: a value cannot start a row or a field of its own', () => {
    expect(visibleLine('mine\nf00-fake-id  https://evil.example\tyes')).toBe(
      'mine\\x0af00-fake-id  https://evil.example\\x09yes',
    );
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => expect(visibleLine(s)).not.toMatch(CONTROL_OR_LINE)));
  });
});

describe(visibleJson.name, () => {
  it('escapes what JSON.stringify leaves raw (DEL and C1): the same value to a parser, nothing to obey', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ unit: 'binary' }), (value, s) => {
        for (const v of [value, { description: s, nested: [s] }]) {
          const json = visibleJson(JSON.stringify(v, null, 2));
          expect(json).not.toMatch(CONTROL);
          expect(JSON.parse(json)).toEqual(JSON.parse(JSON.stringify(v)));
        }
      }),
    );
    expect(visibleJson(JSON.stringify({ d: `${DESCRIPTION}\x9b` }))).toBe(
      '{"d":"\\u001b]0;you have been pwned\\u0007\\u001b[2J\\u009b"}',
    );
  });
});
