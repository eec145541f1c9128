import { createHash } from 'node:crypto';
import { IHeaders, Message } from 'kafkajs';
import { DeadLetterHeaders } from '@app/contracts';
import { IngestBatch } from '../ingest/ingest-batch';
import { PoisonMessage } from '../ingest/batch-plan';

/**
 * Bytes of dead letters per produce request. The broker refuses a record batch over the topic's
 * max.message.bytes (1 MiB by default) as MESSAGE_TOO_LARGE, and never accepts it on a retry: one fetched
 * batch of poison (a misconfigured producer writing raw JSON) plus our headers easily exceeds it.
 */
export const DEAD_LETTER_REQUEST_BYTES = 256 * 1024;
/** What a dead letter keeps of a value too large to copy whole: enough to recognise it. */
export const TRUNCATED_VALUE_BYTES = 16 * 1024;

const REFUSED_FOR_SIZE = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);

/** The original bytes, key and headers, plus why and where from, so the record can be inspected and replayed. */
export function toDeadLetter(topic: string, partition: number, p: PoisonMessage): Message {
  const headers: IHeaders = {
    ...(p.message.headers ?? {}),
    [DeadLetterHeaders.reason]: p.reason.slice(0, 1000),
    [DeadLetterHeaders.topic]: topic,
    [DeadLetterHeaders.partition]: String(partition),
    [DeadLetterHeaders.offset]: p.message.offset,
  };
  return { key: p.message.key, value: p.message.value, headers };
}

/**
 * A dead letter the broker will not take whole: the value cut to its first bytes, the original headers
 * dropped, and what it was recorded beside it (size, SHA-256). The x-origin headers say where the original
 * still is (its topic, partition and offset), for as long as that topic's retention keeps it.
 */
export function shrunkDeadLetter(letter: Message): Message {
  const value = letter.value === null || letter.value === undefined ? null : Buffer.from(letter.value);
  const h = letter.headers ?? {};
  const keep = [
    DeadLetterHeaders.reason,
    DeadLetterHeaders.topic,
    DeadLetterHeaders.partition,
    DeadLetterHeaders.offset,
  ];
  const headers: IHeaders = Object.fromEntries(keep.filter((k) => h[k] !== undefined).map((k) => [k, h[k]!]));
  headers[DeadLetterHeaders.truncated] = 'true';
  if (value) {
    headers[DeadLetterHeaders.originalBytes] = String(value.length);
    headers[DeadLetterHeaders.originalSha256] = createHash('sha256').update(value).digest('hex');
  }
  const key = letter.key ? Buffer.from(letter.key).subarray(0, 1024) : null;
  return { key, value: value?.subarray(0, TRUNCATED_VALUE_BYTES) ?? null, headers };
}

const sizeOf = (m: Message) =>
  (m.value ? Buffer.byteLength(m.value) : 0) +
  (m.key ? Buffer.byteLength(m.key) : 0) +
  Object.entries(m.headers ?? {}).reduce((n, [k, v]) => n + k.length + (v ? Buffer.byteLength(String(v)) : 0), 0) +
  64;

/** Splits dead letters into requests of at most `maxBytes` (a single larger letter goes alone). */
export function chunkBySize(letters: Message[], maxBytes = DEAD_LETTER_REQUEST_BYTES): Message[][] {
  const chunks: Message[][] = [];
  let current: Message[] = [];
  let bytes = 0;
  for (const letter of letters) {
    const size = sizeOf(letter);
    if (current.length > 0 && bytes + size > maxBytes) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(letter);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** The broker's reason, when it refused a request for its size: a refusal no retry will change. */
export function refusedForSize(err: unknown): boolean {
  for (
    let e = err as { type?: string; cause?: unknown; originalError?: unknown } | undefined;
    e;
    e = (e.cause ?? e.originalError) as typeof e
  ) {
    if (e.type && REFUSED_FOR_SIZE.has(e.type)) return true;
  }
  return false;
}

export type SendLetters = (letters: Message[]) => Promise<void>;

/**
 * Sends dead letters in requests the broker accepts. A request refused for its size is split; a single
 * letter refused for its size is shrunk (shrunkDeadLetter) and sent again. Any other error is thrown to the
 * caller, which retries it as transient. Returns how many letters had to be shrunk.
 */
export async function sendDeadLetters(letters: Message[], send: SendLetters): Promise<number> {
  let shrunk = 0;
  const pending = chunkBySize(letters);
  while (pending.length > 0) {
    const chunk = pending.shift()!;
    try {
      await send(chunk);
    } catch (err) {
      if (!refusedForSize(err)) throw err;
      if (chunk.length > 1) {
        const half = Math.ceil(chunk.length / 2);
        pending.unshift(chunk.slice(0, half), chunk.slice(half));
      } else if (chunk[0].headers?.[DeadLetterHeaders.truncated] === undefined) {
        shrunk++;
        pending.unshift([shrunkDeadLetter(chunk[0])]);
      } else {
        throw err; // even the shrunk letter is refused: the DLQ topic's limit is below any sensible size
      }
    }
  }
  return shrunk;
}

/** Awaited with acks=all before the batch commits: a dead letter is never lost between topics. */
export async function publishDeadLetters(batch: IngestBatch, poison: PoisonMessage[]): Promise<number> {
  if (poison.length === 0) return 0;
  return sendDeadLetters(
    poison.map((p) => toDeadLetter(batch.topic, batch.partition, p)),
    async (messages) => void (await batch.producer.send({ topic: batch.deadLetterTopic, acks: -1, messages })),
  );
}
