import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { BodyBudget } from './body-budget';
import { BodyError, FIRST_BLOCK_BYTES, readBody } from './body-reader';

// Every way a body read ends gives its reservation back: read whole, too large, refused, failed, aborted,
// closed. A leak here would shrink the budget for good, one request at a time, until every body is refused.

/** A request as readBody sees it: a readable stream with headers and Node's `complete` flag. */
function request(headers: Record<string, string> = {}) {
  const raw = Object.assign(new PassThrough(), { headers, complete: false });
  return raw as unknown as IncomingMessage & PassThrough & { complete: boolean };
}

function read(
  raw: IncomingMessage,
  budget: BodyBudget,
  options: { payload?: PassThrough; max?: number; sender?: string } = {},
) {
  const calls: { err: BodyError | null; body?: Buffer }[] = [];
  const reservation = budget.open(options.sender ?? 'webhook:webhook-1');
  readBody(raw, options.payload ?? (raw as unknown as PassThrough), reservation, options.max ?? 65536, (err, body) =>
    calls.push({ err, body }),
  );
  return { calls, reservation };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('readBody', () => {
  it('reserves an announced Content-Length before a byte is read, and gives it back once the body is read', async () => {
    const budget = new BodyBudget(1 << 20, 1 << 20);
    const raw = request({ 'content-length': '11' });
    const { calls } = read(raw, budget);
    expect(budget.held).toBe(11);
    raw.write('hello ');
    raw.end('world');
    raw.complete = true;
    await tick();
    expect(calls).toEqual([{ err: null, body: Buffer.from('hello world') }]);
    expect(budget.held).toBe(0);
  });

  it('refuses an announced body the budget cannot hold at once, reading none of it', async () => {
    const budget = new BodyBudget(100_000, 100_000);
    const other = budget.open('webhook:webhook-2');
    other.grow(60_000);
    const raw = request({ 'content-length': '50000' });
    const { calls } = read(raw, budget);
    expect(calls).toEqual([{ err: expect.objectContaining({ refusal: 'budget' }), body: undefined }]);
    expect(raw.listenerCount('data')).toBe(0);
    expect(budget.held).toBe(60_000);
  });

  it("refuses a sender past its share while another sender's body is still read", async () => {
    const budget = new BodyBudget(100_000, 30_000);
    const first = read(request({ 'content-length': '30000' }), budget);
    const second = read(request({ 'content-length': '1' }), budget);
    expect(first.calls).toEqual([]);
    expect(second.calls[0].err?.refusal).toBe('share');
    const third = read(request({ 'content-length': '30000' }), budget, { sender: 'admin:ops' });
    expect(third.calls).toEqual([]);
    expect(budget.held).toBe(60_000);
  });

  it('grows the reservation of a body of unknown size in blocks as it arrives, one byte at a time too', async () => {
    const budget = new BodyBudget(1 << 20, 1 << 20);
    const raw = request({ 'transfer-encoding': 'chunked' });
    const { calls } = read(raw, budget);
    expect(budget.held).toBe(0);
    const text = 'x'.repeat(3 * FIRST_BLOCK_BYTES);
    for (const c of text) raw.write(c);
    await tick();
    // 4 KiB, then as much again, then the 8 KiB so far again: never more than twice the bytes read.
    expect(budget.held).toBe(4 * FIRST_BLOCK_BYTES);
    raw.end();
    raw.complete = true;
    await tick();
    expect(calls[0].body!.toString()).toBe(text);
    expect(budget.held).toBe(0);
  });

  it('refuses a body of unknown size as it passes the budget, and gives back what it held', async () => {
    const budget = new BodyBudget(5 * FIRST_BLOCK_BYTES, 4 * FIRST_BLOCK_BYTES);
    budget.open('admin:ops').grow(2 * FIRST_BLOCK_BYTES);
    const raw = request({ 'transfer-encoding': 'chunked' });
    const { calls } = read(raw, budget);
    raw.write(Buffer.alloc(2 * FIRST_BLOCK_BYTES));
    await tick();
    expect(budget.held).toBe(4 * FIRST_BLOCK_BYTES);
    raw.write(Buffer.alloc(1)); // the next block (2 blocks' worth) fits its share, not what the budget has left
    await tick();
    expect(calls).toEqual([{ err: expect.objectContaining({ refusal: 'budget' }), body: undefined }]);
    expect(budget.held).toBe(2 * FIRST_BLOCK_BYTES);
    expect(raw.listenerCount('data')).toBe(0);
  });

  it.each([
    ['announced', { 'content-length': '70000' }, 0],
    ['chunked', { 'transfer-encoding': 'chunked' }, 70_000],
  ])('refuses a body over the per-request limit (%s) as too large, holding nothing', async (_, headers, send) => {
    const budget = new BodyBudget(1 << 20, 1 << 20);
    const raw = request(headers);
    const { calls } = read(raw, budget);
    if (send) raw.write(Buffer.alloc(send));
    await tick();
    expect(calls).toEqual([{ err: expect.objectContaining({ refusal: 'too-large' }), body: undefined }]);
    expect(budget.held).toBe(0);
  });

  it('gives the reservation back when the sender goes away mid-body (an error, then close), calling done once', async () => {
    const budget = new BodyBudget(1 << 20, 1 << 20);
    const raw = request({ 'content-length': '1000' });
    const { calls } = read(raw, budget);
    raw.write('partial');
    await tick();
    raw.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    await tick();
    expect(calls).toHaveLength(1);
    expect(calls[0].err).toMatchObject({ message: 'aborted', statusCode: 400 });
    expect(budget.held).toBe(0);
  });

  it('gives the reservation back when the request closes without an error (a timeout cut it)', async () => {
    const budget = new BodyBudget(1 << 20, 1 << 20);
    const raw = request({ 'content-length': '1000' });
    const { calls } = read(raw, budget);
    raw.destroy();
    await tick();
    expect(calls).toEqual([{ err: expect.objectContaining({ statusCode: 400 }), body: undefined }]);
    expect(budget.held).toBe(0);
  });

  it('refuses a body shorter than its Content-Length as Fastify did (400), holding nothing after', async () => {
    const budget = new BodyBudget(1 << 20, 1 << 20);
    const raw = request({ 'content-length': '10' });
    const { calls } = read(raw, budget);
    raw.end('short');
    await tick();
    expect(calls[0].err).toMatchObject({ code: 'FST_ERR_CTP_INVALID_CONTENT_LENGTH' });
    expect(budget.held).toBe(0);
  });

  it('reads an empty body (Content-Length: 0) without reserving anything', async () => {
    const budget = new BodyBudget(1 << 20, 1 << 20);
    const raw = request({ 'content-length': '0' });
    const { calls } = read(raw, budget);
    raw.end();
    await tick();
    expect(calls).toEqual([{ err: null, body: Buffer.alloc(0) }]);
    expect(budget.held).toBe(0);
  });

  describe('a decoded body (the payload is a decoder, not the request)', () => {
    it('grows as decoded bytes arrive, whatever the Content-Length, and gives them back at the end', async () => {
      const budget = new BodyBudget(1 << 20, 1 << 20);
      const raw = request({ 'content-length': '20' });
      const decoder = Object.assign(new PassThrough(), { receivedEncodedLength: 20 });
      const { calls } = read(raw, budget, { payload: decoder });
      expect(budget.held).toBe(0);
      decoder.write(Buffer.alloc(5000, 'a'));
      await tick();
      expect(budget.held).toBe(2 * FIRST_BLOCK_BYTES);
      decoder.end();
      await tick();
      expect(calls[0].body).toHaveLength(5000);
      expect(budget.held).toBe(0);
    });

    it('gives back and ends the decoder when it fails (not valid gzip), keeping its status', async () => {
      const budget = new BodyBudget(1 << 20, 1 << 20);
      const decoder = new PassThrough();
      const { calls } = read(request({ 'transfer-encoding': 'chunked' }), budget, { payload: decoder });
      decoder.write(Buffer.alloc(10));
      decoder.destroy(Object.assign(new Error('not valid gzip'), { statusCode: 415 }));
      await tick();
      expect(calls).toEqual([{ err: expect.objectContaining({ statusCode: 415 }), body: undefined }]);
      expect(budget.held).toBe(0);
    });

    it('gives back and ends the decoder when the request closes before its body arrived whole', async () => {
      const budget = new BodyBudget(1 << 20, 1 << 20);
      const raw = request({ 'transfer-encoding': 'chunked' });
      const decoder = new PassThrough();
      const { calls } = read(raw, budget, { payload: decoder });
      decoder.write(Buffer.alloc(10));
      await tick();
      raw.emit('close');
      await tick();
      expect(calls).toHaveLength(1);
      expect(decoder.destroyed).toBe(true); // its window and its decode turn go now
      expect(budget.held).toBe(0);
    });

    it('goes on reading when the request completed and the decoder has not finished yet', async () => {
      const budget = new BodyBudget(1 << 20, 1 << 20);
      const raw = request({ 'transfer-encoding': 'chunked' });
      const decoder = new PassThrough();
      const { calls } = read(raw, budget, { payload: decoder });
      raw.complete = true;
      raw.emit('close');
      decoder.end('{}');
      await tick();
      expect(calls).toEqual([{ err: null, body: Buffer.from('{}') }]);
      expect(budget.held).toBe(0);
    });

    it('ends the decoder when the body is refused, so its turn passes on', async () => {
      const budget = new BodyBudget(FIRST_BLOCK_BYTES, FIRST_BLOCK_BYTES);
      const decoder = new PassThrough();
      const { calls } = read(request({ 'transfer-encoding': 'chunked' }), budget, { payload: decoder });
      decoder.write(Buffer.alloc(FIRST_BLOCK_BYTES + 1));
      await tick();
      expect(calls[0].err?.refusal).toBe('share');
      expect(decoder.destroyed).toBe(true);
      expect(budget.held).toBe(0);
    });
  });
});
