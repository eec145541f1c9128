import { Transform } from 'node:stream';

/**
 * The brotli decoder allocates its ring buffer from the window the stream declares (WBITS, RFC 7932 §9.1), up to
 * 16 MiB for WBITS 24, whatever the body limit; Node's decoder has no parameter to cap it. Encoders declare large
 * windows for small inputs too (Node's default is 22, 4 MiB), so refusing large windows would refuse ordinary
 * senders. But a back-reference never reaches further back than what was already decoded, and we stop decoding
 * at `limit` bytes: up to there, a window of at least `limit + 16` bytes (the format's gap) decodes exactly the
 * same bytes. So the declared window is lowered to that, never raised.
 *
 * WBITS 18..24 are coded in the first byte as bit 0 = 1 and bits 1..3 = WBITS - 17; rewriting those three bits
 * keeps every later bit in place. Smaller windows (10..17, other codes) are already at most 128 KiB and left as
 * sent; the large-window extension is refused by the decoder itself (BROTLI_DECODER_PARAM_LARGE_WINDOW off).
 */
export function windowBitsFor(limit: number): number {
  return Math.min(24, Math.max(18, Math.ceil(Math.log2(limit + 16))));
}

/** The first byte of a brotli stream with its window lowered to at most `maxBits` (18..24). */
export function lowerWindow(firstByte: number, maxBits: number): number {
  if ((firstByte & 1) === 0) return firstByte; // WBITS 16
  const n = (firstByte >> 1) & 0b111;
  if (n === 0 || 17 + n <= maxBits) return firstByte; // 10..17 or large-window marker; or already small enough
  return (firstByte & ~0b1110) | ((maxBits - 17) << 1);
}

/** Passes a brotli stream through with its declared window lowered to what `limit` decoded bytes need. */
export function boundBrotliWindow(limit: number): Transform {
  const maxBits = windowBitsFor(limit);
  let first = true;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      if (first && chunk.length > 0) {
        first = false;
        chunk = Buffer.from(chunk); // the request's buffer is not ours to change
        chunk[0] = lowerWindow(chunk[0], maxBits);
      }
      done(null, chunk);
    },
  });
}
