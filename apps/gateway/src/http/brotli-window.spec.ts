import zlib from 'node:zlib';
import { lowerWindow, windowBitsFor } from './brotli-window';

const brotli = (data: Buffer, lgwin: number, quality = 11) =>
  zlib.brotliCompressSync(data, {
    params: { [zlib.constants.BROTLI_PARAM_LGWIN]: lgwin, [zlib.constants.BROTLI_PARAM_QUALITY]: quality },
  });
const lowered = (stream: Buffer, maxBits: number) => {
  const copy = Buffer.from(stream);
  copy[0] = lowerWindow(copy[0], maxBits);
  return copy;
};

/** What a streaming decoder gives, up to `bytes` (past the lowered window it may fail: we never go there). */
function decodedPrefix(stream: Buffer, bytes: number): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => resolve(Buffer.concat(chunks).subarray(0, bytes));
    const decoder = zlib.createBrotliDecompress();
    decoder.on('data', (c: Buffer) => {
      chunks.push(c);
      if ((size += c.length) >= bytes) {
        decoder.destroy();
        done();
      }
    });
    decoder.on('error', done).on('end', done);
    decoder.end(stream);
  });
}

describe('brotli window bound', () => {
  it('needs a window of the limit plus the 16-byte gap, between 18 and 24 bits', () => {
    expect(windowBitsFor(1024)).toBe(18);
    expect(windowBitsFor(65536)).toBe(18);
    expect(windowBitsFor(1 << 20)).toBe(21);
    expect(windowBitsFor((1 << 20) - 16)).toBe(20);
    expect(windowBitsFor(1 << 30)).toBe(24);
  });

  it('lowers WBITS 19..24 to the bound and leaves smaller windows as sent', () => {
    for (let lgwin = 10; lgwin <= 24; lgwin++) {
      const stream = brotli(Buffer.from('x'), lgwin);
      const first = lowerWindow(stream[0], 18);
      // Bits 1..3 hold WBITS - 17 for 18..24; anything else is untouched.
      if (lgwin > 18) expect((first >> 1) & 7).toBe(1);
      else expect(first).toBe(stream[0]);
      expect(first & ~0b1110).toBe(stream[0] & ~0b1110);
    }
  });

  const plants = (n: number) =>
    Buffer.from(Array.from({ length: n }, (_, i) => `{"id":${i},"name":"plant ${i % 977}"}`).join(','));

  it('decodes a body up to the limit exactly as sent, whatever window its encoder declared', async () => {
    const bound = (1 << 18) - 16;
    const text = plants(20_000).subarray(0, bound);
    for (const quality of [5, 11])
      for (const lgwin of [19, 22, 24]) {
        const out = await decodedPrefix(lowered(brotli(text, lgwin, quality), 18), bound + 1);
        expect(out.equals(text)).toBe(true);
      }
  });

  it('decodes the same bytes as far as it goes for a body larger than the lowered window', async () => {
    const text = plants(12_000);
    for (const lgwin of [19, 22, 24]) {
      const out = await decodedPrefix(lowered(brotli(text, lgwin, 5), 18), text.length);
      expect(out.length).toBeGreaterThan(200_000);
      expect(out.equals(text.subarray(0, out.length))).toBe(true);
    }
  });
});
