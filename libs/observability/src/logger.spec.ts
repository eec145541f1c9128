import { Writable } from 'node:stream';
import { createLogger } from './logger';

// Issue 36 (a): what is logged may hold text others wrote (a receiver's error, a description, a plant's name).
const WRITTEN = 'ok\x1b]0;pwned\x07\x1b[2J\r\x9b31m\x7f';
/** A character a terminal obeys: C0 but line feed, DEL and C1. */
// eslint-disable-next-line no-control-regex -- finding control characters is the test
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;
/** pino-pretty's own colours, the one escape sequence a pretty line may hold. */
// eslint-disable-next-line no-control-regex -- as above
const COLOUR = /\x1b\[\d+m/g;

function lines(format: 'json' | 'pretty'): { logged: string[]; log: ReturnType<typeof createLogger> } {
  const logged: string[] = [];
  const into = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logged.push(chunk.toString());
      done();
    },
  });
  const log = createLogger('test', 'info', format, into);
  return { logged, log };
}

describe('the logs', () => {
  it('write JSON lines with no control character a terminal obeys, and the same values for a collector', () => {
    const { logged, log } = lines('json');
    log.info({ receiver: { reply: WRITTEN }, url: `https://r.example/${WRITTEN}` }, `failed: ${WRITTEN}`);
    expect(logged).toHaveLength(1);
    expect(logged[0].slice(0, -1)).not.toMatch(CONTROL);
    expect(JSON.parse(logged[0])).toMatchObject({
      msg: `failed: ${WRITTEN}`,
      receiver: { reply: WRITTEN },
      url: `https://r.example/${WRITTEN}`,
    });
  });

  it('write pretty lines that show each control character as an escape, in the message and in every field', async () => {
    const { logged, log } = lines('pretty');
    log.info({ context: WRITTEN, receiver: { reply: WRITTEN } }, `failed: ${WRITTEN}`);
    log.flush();
    await new Promise((r) => setImmediate(r));
    const text = logged.join('');
    expect(text.replace(COLOUR, '').slice(0, -1)).not.toMatch(CONTROL);
    expect(text).toContain('failed: ok\\x1b]0;pwned\\x07\\x1b[2J\\x0d\\x9b31m\\x7f');
    expect(text).toMatch(/"reply":"ok\\+x1b\]0;pwned\\+x07/);
  });
});
