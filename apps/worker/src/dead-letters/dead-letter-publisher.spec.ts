import { KafkaJSNonRetriableError, KafkaJSProtocolError, Message } from 'kafkajs';
import {
  chunkBySize,
  DEAD_LETTER_REQUEST_BYTES,
  sendDeadLetters,
  shrunkDeadLetter,
  TRUNCATED_VALUE_BYTES,
} from './dead-letter-publisher';

const letter = (bytes: number, offset = '1'): Message => ({
  key: 'k',
  value: Buffer.alloc(bytes, 'x'),
  headers: {
    'x-error': 'not a CloudEvent',
    'x-origin-topic': 'plant.created',
    'x-origin-partition': '0',
    'x-origin-offset': offset,
    'x-big': 'y'.repeat(100),
  },
});
// As kafkajs' retrier raises it: the broker's protocol error as the cause of a non-retriable one.
const tooLarge = () => {
  const cause = new KafkaJSProtocolError({
    type: 'MESSAGE_TOO_LARGE',
    code: 10,
    retriable: false,
    message: 'too large',
  } as never);
  return new (KafkaJSNonRetriableError as unknown as new (e: Error, o: { cause: Error }) => Error)(cause, { cause });
};

/** A fake broker that refuses any request over `limit` bytes of values, as max.message.bytes does. */
function broker(limit: number) {
  const accepted: Message[] = [];
  const send = jest.fn(async (messages: Message[]) => {
    const bytes = messages.reduce((n, m) => n + Buffer.byteLength(m.value as Buffer) + 200, 0);
    if (bytes > limit) throw tooLarge();
    accepted.push(...messages);
  });
  return { accepted, send };
}

describe('dead letters', () => {
  it('splits a burst into requests under the byte budget (20,000 raw records were one refused request)', () => {
    const chunks = chunkBySize(Array.from({ length: 20000 }, (_, i) => letter(100, String(i))));
    expect(chunks.flat()).toHaveLength(20000);
    expect(chunks.length).toBeGreaterThan(1);
  });

  it('sends every letter of a burst, splitting further when the broker still refuses', async () => {
    const b = broker(DEAD_LETTER_REQUEST_BYTES / 4);
    const letters = Array.from({ length: 5000 }, (_, i) => letter(300, String(i)));
    expect(await sendDeadLetters(letters, b.send)).toBe(0);
    expect(b.accepted.map((m) => m.headers!['x-origin-offset'])).toEqual(
      letters.map((m) => m.headers!['x-origin-offset']),
    );
  });

  it('shrinks a single letter too large for the broker, keeping where the original is and what it was', async () => {
    const b = broker(512 * 1024);
    const huge = letter(1_000_000, '42');
    expect(await sendDeadLetters([letter(10, '41'), huge, letter(10, '43')], b.send)).toBe(1);
    expect(b.accepted.map((m) => m.headers!['x-origin-offset'])).toEqual(['41', '42', '43']);
    const cut = b.accepted[1];
    expect((cut.value as Buffer).length).toBe(TRUNCATED_VALUE_BYTES);
    expect(cut.headers).toMatchObject({
      'x-truncated': 'true',
      'x-original-bytes': '1000000',
      'x-origin-offset': '42',
      'x-error': 'not a CloudEvent',
    });
    expect(cut.headers!['x-original-sha256']).toMatch(/^[0-9a-f]{64}$/);
    expect(cut.headers!['x-big']).toBeUndefined();
  });

  it('does not swallow an error that is not about size: the caller retries it', async () => {
    const send = jest.fn(async () => Promise.reject(new Error('broker down')));
    await expect(sendDeadLetters([letter(10)], send)).rejects.toThrow('broker down');
  });

  it('gives up (to the caller) if even the shrunk letter is refused', async () => {
    const b = broker(100);
    await expect(sendDeadLetters([letter(1000)], b.send)).rejects.toThrow(/too large/);
  });

  it('shrinks a letter with no value too', () => {
    expect(shrunkDeadLetter({ key: null, value: null, headers: {} }).headers).toEqual({ 'x-truncated': 'true' });
  });
});
