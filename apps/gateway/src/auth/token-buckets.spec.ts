import { TokenBuckets } from './token-buckets';

/** A clock the test moves by hand. */
function clock() {
  let t = 1_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe(TokenBuckets.name, () => {
  it('grants a burst at once, then refuses with the time until the next token, taking nothing for a refusal', () => {
    const c = clock();
    const buckets = new TokenBuckets(30, 10, 100, c.now); // one token every 2 s
    for (let i = 0; i < 10; i++) expect(buckets.take('link')).toBeNull();
    expect(buckets.take('link')).toBe(2_000);
    c.advance(500);
    expect(buckets.take('link')).toBe(1_500); // the refusal above took nothing
    c.advance(1_500);
    expect(buckets.take('link')).toBeNull();
    expect(buckets.take('link')).toBe(2_000);
  });

  it('refills at the rate, never above the burst', () => {
    const c = clock();
    const buckets = new TokenBuckets(60, 3, 100, c.now); // one a second
    for (let i = 0; i < 3; i++) buckets.take('link');
    c.advance(60_000); // a minute's worth, but the bucket holds 3
    for (let i = 0; i < 3; i++) expect(buckets.take('link')).toBeNull();
    expect(buckets.take('link')).toBe(1_000);
  });

  it("keeps each key's bucket apart: one past its rate costs the others nothing", () => {
    const c = clock();
    const buckets = new TokenBuckets(30, 2, 100, c.now);
    buckets.take('greedy');
    buckets.take('greedy');
    for (let i = 0; i < 300; i++) expect(buckets.take('greedy')).not.toBeNull(); // the finding's 300 calls
    expect(buckets.take('other')).toBeNull();
    expect(buckets.take('other')).toBeNull();
  });

  it('forgets buckets left idle long enough to be full again, which changes no answer', () => {
    const c = clock();
    const buckets = new TokenBuckets(60, 5, 100, c.now); // full again 5 s after the last call
    for (let i = 0; i < 20; i++) buckets.take(`link-${i}`);
    expect(buckets.size).toBe(20);
    c.advance(4_999);
    buckets.take('busy');
    expect(buckets.size).toBe(21);
    c.advance(1); // 5 s since the twenty were touched; 1 ms since busy was
    buckets.take('busy');
    expect(buckets.size).toBe(1);
    for (let i = 0; i < 5; i++) expect(buckets.take('link-0')).toBeNull(); // a full bucket, as before
  });

  it('holds at most maxKeys buckets, dropping the least recently used, never one refused just now', () => {
    const c = clock();
    const buckets = new TokenBuckets(1, 1, 3, c.now); // a minute to refill: nothing goes idle here
    buckets.take('a');
    buckets.take('b');
    buckets.take('c');
    c.advance(1);
    expect(buckets.take('a')).not.toBeNull(); // refused, and so the most recently used
    buckets.take('d'); // room for d: b goes
    expect(buckets.size).toBe(3);
    expect(buckets.take('a')).not.toBeNull(); // still empty: its bucket was kept
    expect(buckets.take('c')).not.toBeNull();
    expect(buckets.take('b')).toBeNull(); // forgotten, so full again: the price of the bound
    for (let i = 0; i < 10_000; i++) buckets.take(`flood-${i}`);
    expect(buckets.size).toBe(3);
  });

  it('refuses a rate, burst or bound that could not work', () => {
    expect(() => new TokenBuckets(0, 10)).toThrow(/rate above 0/);
    expect(() => new TokenBuckets(30, 0)).toThrow(/burst/);
    expect(() => new TokenBuckets(30, 10, 0)).toThrow(/key count/);
  });
});
