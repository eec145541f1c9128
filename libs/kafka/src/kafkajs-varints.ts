/**
 * kafkajs 2.2.4 writes every varint of a record (its length, offset delta, key and value lengths, and each
 * header's two lengths: ~12 per webhook) by pushing its bytes into a new array and copying that array into a new
 * Buffer. That is the largest single source of the gateway's garbage under load (bench:gateway's allocation
 * profile, docs/benchmarks.md). This writes the same bytes straight into the encoder's buffer. Pinned with the
 * fixes in kafkajs-fixes.ts (which refuses another kafkajs version); kafkajs-varints.spec.ts checks the bytes
 * against kafkajs's own method.
 */
import { KAFKAJS_VERSION_FIXED } from './kafkajs-fixes';

interface EncoderLike {
  buf: Buffer;
  offset: number;
  ensureAvailable(length: number): void;
  writeUVarInt(value: number): EncoderLike;
}
type EncoderClass = { prototype: EncoderLike };

// eslint-disable-next-line @typescript-eslint/no-require-imports
const Encoder = require('kafkajs/src/protocol/encoder') as EncoderClass;

/** kafkajs's own method, kept for the spec. */
export const kafkajsWriteUVarInt = Encoder.prototype.writeUVarInt;
export const VARINTS_FOR = KAFKAJS_VERSION_FIXED;

Encoder.prototype.writeUVarInt = function writeUVarInt(this: EncoderLike, value: number) {
  this.ensureAvailable(5); // a 32-bit value takes at most 5 bytes
  let rest = value;
  while ((rest & 0xffffff80) !== 0) {
    this.buf[this.offset++] = (rest & 0x7f) | 0x80;
    rest >>>= 7;
  }
  this.buf[this.offset++] = rest & 0x7f;
  return this;
};

export { Encoder as PatchedEncoder };
