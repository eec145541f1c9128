import { decodeCursor, encodeCursor } from './cursor';
import { toPage } from './pagination';

describe('page cursors', () => {
  it('round-trip and refuse garbage', () => {
    expect(decodeCursor(encodeCursor(12345))).toBe(12345);
    expect(decodeCursor('not-a-cursor')).toBeNull();
    expect(decodeCursor(Buffer.from('s:-1').toString('base64url'))).toBeNull();
    expect(decodeCursor(Buffer.from('s:9007199254740991').toString('base64url'))).toBe(9007199254740991);
    expect(decodeCursor(Buffer.from('s:9007199254740993').toString('base64url'))).toBeNull(); // never rounded
  });

  it('gives a next cursor only when a further row exists', () => {
    const rows = [{ seq: 9 }, { seq: 8 }, { seq: 7 }];
    expect(toPage(rows, 2, (r) => r.seq)).toEqual({ items: [9, 8], nextCursor: encodeCursor(8) });
    expect(toPage(rows, 3, (r) => r.seq)).toEqual({ items: [9, 8, 7], nextCursor: null });
  });
});
