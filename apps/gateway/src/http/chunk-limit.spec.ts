import { ChunkFollower } from './chunk-limit';

const head = (extra = '') => `POST /plant/webhook HTTP/1.1\r\nHost: x\r\n${extra}\r\n`;
const chunked = head('Transfer-Encoding: chunked\r\n');

/** Feeds `text` to a follower in pieces of `size` bytes; the first verdict that is not 'ok', else 'ok'. */
function follow(text: string, size = text.length, limit = 1024) {
  const follower = new ChunkFollower(limit);
  const bytes = Buffer.from(text, 'latin1');
  for (let i = 0; i < bytes.length; i += size) {
    const verdict = follower.push(bytes.subarray(i, i + size));
    if (verdict !== 'ok') return verdict;
  }
  return 'ok';
}

describe(ChunkFollower.name, () => {
  it.each([1, 2, 7, 1000])('refuses a chunk declared over the limit, read %i bytes at a time', (size) => {
    expect(follow(`${chunked}10000000\r\nab`, size)).toBe('too-large');
    expect(follow(`${chunked}401;ext=1\r\n`, size)).toBe('too-large');
    expect(follow(`${chunked}${'f'.repeat(40)}\r\n`, size)).toBe('too-large');
  });

  it('counts the chunks of one body together, and starts again with the next request', () => {
    const body = `200\r\n${'a'.repeat(0x200)}\r\n`;
    expect(follow(`${chunked}${body}${body}0\r\n\r\n`)).toBe('ok');
    expect(follow(`${chunked}${body}${body}${body}`)).toBe('too-large');
    const request = `${chunked}${body}${body}0\r\n\r\n`;
    expect(follow(request + request + request, 5)).toBe('ok');
  });

  it('skips Content-Length bodies and trailers, so a chunk-size-looking body is not read as one', () => {
    const lookalike = 'FFFFFF\r\n';
    const withLength = `${head(`Content-Length: ${lookalike.length}\r\n`)}${lookalike}`;
    const withTrailer = `${chunked}3\r\nabc\r\n0\r\nX-T: FFFFFF\r\n\r\n`;
    expect(follow(`${withLength}${withTrailer}${chunked}3\r\nabc\r\n0\r\n\r\n`, 3)).toBe('ok');
    expect(follow(`${withLength}${chunked}FFFFFF\r\n`, 3)).toBe('too-large');
  });

  it('stops following (leaving the judgement to llhttp) when the framing is not what it expects', () => {
    expect(follow(`${chunked}zz\r\n`)).toBe('lost');
    expect(follow(`${chunked}3\r\nabcXX\r\n`)).toBe('lost');
    expect(follow(head('Content-Length: 1\r\nTransfer-Encoding: chunked\r\n'))).toBe('lost');
    expect(follow(`GET / HTTP/1.1\r\nX: ${'a'.repeat(70 * 1024)}`, 4096)).toBe('lost');
  });

  it.each([
    ['no HTTP version (HTTP/0.9)', 'GET /readyz\r\n\r\n'],
    ['two spaces after the method', 'POST  /plant/webhook HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['two spaces before the version', 'GET /readyz  HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a tab for a space', 'GET\t/readyz HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a leading space', ' GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a version that is not HTTP/x.y', 'GET /readyz HTTP/1\r\nHost: x\r\n\r\n'],
  ])('refuses a request line with %s, read whole or a byte at a time', (_case, text) => {
    expect(follow(text)).toBe('bad-request-line');
    expect(follow(text, 1)).toBe('bad-request-line');
  });

  it('checks the request line of every pipelined request, after bodies of either framing', () => {
    const body = `5\r\nabcde\r\n0\r\n\r\n`;
    const good = `POST /plant/webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc${chunked}${body}`;
    expect(follow(`\r\n${good}${good}`, 3)).toBe('ok');
    expect(follow(`${good}GET /readyz\r\n\r\n`, 3)).toBe('bad-request-line');
    // An Upgrade header without "Connection: upgrade" is no upgrade: the next request is still checked.
    expect(follow(`${head('Upgrade: h2c\r\n')}GET  / HTTP/1.1\r\n\r\n`)).toBe('bad-request-line');
  });

  it('knows whether the request it reads is the one answered early, not the next on the connection', () => {
    const follower = new ChunkFollower(1024);
    const chunk = `200\r\n${'a'.repeat(0x200)}\r\n`;
    expect(follower.answeredThisRequest).toBe(false);
    follower.push(Buffer.from(`${chunked}${chunk}`, 'latin1'));
    follower.answered(); // answered before its body was over
    expect(follower.answeredThisRequest).toBe(true);
    // Its body ends, and the next request arrives in the same read: that one is not answered yet.
    expect(follower.push(Buffer.from(`0\r\n\r\n${chunked}${chunk}`, 'latin1'))).toBe('ok');
    expect(follower.answeredThisRequest).toBe(false);
  });
});
