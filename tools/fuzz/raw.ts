// Framing the HTTP parser must refuse, or must answer without waiting for: what request smuggling, desync and
// slow-body attacks are made of. Each case is sent on a connection of its own, exactly as written, and says what
// a correct gateway answers. Most carry a valid webhook token and plant, so "served" shows as a 200.

export interface RawCase {
  name: string;
  build(p: RawParams): { parts: Buffer[]; endAfter?: boolean };
  /** The only statuses a correct answer has. */
  statuses: number[];
  /** The request never completes: closing without an answer is correct too. */
  mayClose?: boolean;
  /** Everything needed to refuse it is in the head: answered at once, not at the request timeout. */
  prompt?: boolean;
}

export interface RawParams {
  host: string;
  webhookAuth: string;
  plant: () => string;
  limit: number;
}

const crlf = (lines: string[]) => Buffer.from(lines.join('\r\n'), 'latin1');

/** A POST of a valid plant to the webhook with `head` lines in place of the usual ones. */
function post(p: RawParams, requestLine: string, headers: string[], body = p.plant()): Buffer {
  return crlf([requestLine, ...headers, `Content-Length: ${Buffer.byteLength(body)}`, '', body]);
}

const std = (p: RawParams) => [`Host: ${p.host}`, `Authorization: ${p.webhookAuth}`, 'Content-Type: application/json'];
const REFUSED = [400];

export const RAW_CASES: RawCase[] = [
  {
    name: 'two Host headers',
    build: (p) => ({ parts: [post(p, 'POST /plant/webhook HTTP/1.1', [...std(p), 'Host: evil.example'])] }),
    statuses: REFUSED,
  },
  {
    name: 'two Host headers, same value',
    build: (p) => ({ parts: [post(p, 'POST /plant/webhook HTTP/1.1', [...std(p), `Host: ${p.host}`])] }),
    statuses: REFUSED,
  },
  {
    name: 'no Host header',
    build: (p) => ({ parts: [post(p, 'POST /plant/webhook HTTP/1.1', std(p).slice(1))] }),
    statuses: REFUSED,
  },
  {
    name: 'HTTP/2.0 request line',
    build: (p) => ({ parts: [post(p, 'POST /plant/webhook HTTP/2.0', std(p))] }),
    // 505 is the status RFC 9110 names for it; nothing else 5xx is acceptable anywhere.
    statuses: [400, 505],
    mayClose: true,
  },
  {
    name: 'HTTP/3.0 request line',
    build: (p) => ({ parts: [crlf(['GET /readyz HTTP/3.0', `Host: ${p.host}`, '', ''])] }),
    statuses: [400, 505],
    mayClose: true,
  },
  {
    name: 'HTTP/0.9 request line',
    build: () => ({ parts: [Buffer.from('GET /readyz\r\n\r\n')], endAfter: true }),
    statuses: REFUSED,
    mayClose: true,
  },
  {
    name: 'lower-case method',
    build: (p) => ({ parts: [post(p, 'post /plant/webhook HTTP/1.1', std(p))] }),
    statuses: REFUSED,
  },
  {
    name: 'tab in the request line',
    build: (p) => ({ parts: [post(p, 'POST\t/plant/webhook HTTP/1.1', std(p))] }),
    statuses: REFUSED,
  },
  {
    name: 'two spaces in the request line',
    build: (p) => ({ parts: [post(p, 'POST  /plant/webhook HTTP/1.1', std(p))] }),
    statuses: REFUSED,
  },
  {
    name: 'NUL in the request target',
    build: (p) => ({ parts: [post(p, 'POST /plant/web\u0000hook HTTP/1.1', std(p))] }),
    statuses: REFUSED,
  },
  {
    name: 'raw UTF-8 in the request target',
    build: (p) => ({
      parts: [
        Buffer.concat([
          Buffer.from('GET /plants/'),
          Buffer.from('é😀', 'utf8'),
          Buffer.from(` HTTP/1.1\r\nHost: ${p.host}\r\n\r\n`),
        ]),
      ],
    }),
    statuses: [400, 401, 404, 422],
  },
  {
    name: 'bare LF line endings',
    build: (p) => ({
      parts: [
        Buffer.from(
          `POST /plant/webhook HTTP/1.1\nHost: ${p.host}\nAuthorization: ${p.webhookAuth}\nContent-Type: application/json\nContent-Length: 2\n\n{}`,
        ),
      ],
    }),
    statuses: REFUSED,
  },
  {
    name: 'obs-fold header continuation',
    build: (p) => ({ parts: [post(p, 'POST /plant/webhook HTTP/1.1', [...std(p), 'X-Folded: a', ' b'])] }),
    statuses: REFUSED,
  },
  {
    name: 'space before the colon',
    build: (p) => ({
      parts: [post(p, 'POST /plant/webhook HTTP/1.1', [...std(p), 'Content-Type : application/json'])],
    }),
    statuses: REFUSED,
  },
  {
    name: 'NUL in a header value',
    build: (p) => ({ parts: [post(p, 'POST /plant/webhook HTTP/1.1', [...std(p), 'webhook-id: a\u0000b'])] }),
    statuses: REFUSED,
  },
  {
    name: 'Content-Length and Transfer-Encoding',
    build: (p) => {
      const body = p.plant();
      return {
        parts: [
          crlf([
            'POST /plant/webhook HTTP/1.1',
            ...std(p),
            `Content-Length: ${body.length}`,
            'Transfer-Encoding: chunked',
            '',
            `${body.length.toString(16)}`,
            body,
            '0',
            '',
            '',
          ]),
        ],
      };
    },
    statuses: REFUSED,
  },
  {
    name: 'two different Content-Lengths',
    build: (p) => {
      const body = p.plant();
      return {
        parts: [
          crlf([
            'POST /plant/webhook HTTP/1.1',
            ...std(p),
            `Content-Length: ${body.length}`,
            `Content-Length: ${body.length + 5}`,
            '',
            body,
          ]),
        ],
      };
    },
    statuses: REFUSED,
  },
  {
    name: 'negative Content-Length',
    build: (p) => ({ parts: [crlf(['POST /plant/webhook HTTP/1.1', ...std(p), 'Content-Length: -1', '', ''])] }),
    statuses: REFUSED,
  },
  {
    name: 'Content-Length with a plus sign',
    build: (p) => ({ parts: [crlf(['POST /plant/webhook HTTP/1.1', ...std(p), 'Content-Length: +2', '', '{}'])] }),
    statuses: REFUSED,
  },
  {
    name: 'Transfer-Encoding: xchunked',
    build: (p) => ({
      parts: [
        crlf(['POST /plant/webhook HTTP/1.1', ...std(p), 'Transfer-Encoding: xchunked', '', '2', '{}', '0', '', '']),
      ],
    }),
    statuses: [400, 411, 415],
    mayClose: true,
  },
  {
    name: 'Transfer-Encoding: chunked, gzip',
    build: (p) => ({
      parts: [
        crlf([
          'POST /plant/webhook HTTP/1.1',
          ...std(p),
          'Transfer-Encoding: chunked, gzip',
          '',
          '2',
          '{}',
          '0',
          '',
          '',
        ]),
      ],
    }),
    statuses: REFUSED,
    mayClose: true,
  },
  {
    name: 'chunk size not hex',
    build: (p) => ({
      parts: [
        crlf(['POST /plant/webhook HTTP/1.1', ...std(p), 'Transfer-Encoding: chunked', '', 'zz', '{}', '0', '', '']),
      ],
    }),
    statuses: REFUSED,
  },
  {
    name: 'chunk shorter than its size, then FIN',
    build: (p) => ({
      parts: [
        crlf(['POST /plant/webhook HTTP/1.1', ...std(p), 'Transfer-Encoding: chunked', '', '10', '{}', '0', '', '']),
      ],
      endAfter: true,
    }),
    statuses: REFUSED,
    mayClose: true,
  },
  {
    name: 'huge declared chunk',
    // 4 GiB declared, a few bytes sent, then silence: the size alone is over the limit.
    build: (p) => ({
      parts: [
        crlf(['POST /plant/webhook HTTP/1.1', ...std(p), 'Transfer-Encoding: chunked', '', 'ffffffff', '{"id":1']),
      ],
    }),
    statuses: [400, 413],
    prompt: true,
  },
  {
    name: 'chunk over the limit',
    build: (p) => ({
      parts: [
        crlf([
          'POST /plant/webhook HTTP/1.1',
          ...std(p),
          'Transfer-Encoding: chunked',
          '',
          (p.limit + 1).toString(16),
          '{"id":1',
        ]),
      ],
    }),
    statuses: [400, 413],
    prompt: true,
  },
  {
    name: 'chunk size overflowing 64 bits',
    build: (p) => ({
      parts: [
        crlf(['POST /plant/webhook HTTP/1.1', ...std(p), 'Transfer-Encoding: chunked', '', '1'.repeat(40), '{}']),
      ],
    }),
    statuses: [400, 413],
    prompt: true,
  },
  {
    name: 'declared Content-Length over the limit',
    build: (p) => ({
      parts: [crlf(['POST /plant/webhook HTTP/1.1', ...std(p), `Content-Length: ${p.limit * 1000}`, '', '{"id":1'])],
    }),
    statuses: [413],
    prompt: true,
  },
  {
    name: 'body cut short, then FIN',
    build: (p) => ({
      parts: [crlf(['POST /plant/webhook HTTP/1.1', ...std(p), 'Content-Length: 100', '', '{"id":1'])],
      endAfter: true,
    }),
    statuses: [400, 408],
    mayClose: true,
  },
  {
    name: 'long chunk extension',
    build: (p) => ({
      parts: [
        crlf([
          'POST /plant/webhook HTTP/1.1',
          ...std(p),
          'Transfer-Encoding: chunked',
          '',
          `2;${'e'.repeat(20000)}`,
          '{}',
          '0',
          '',
          '',
        ]),
      ],
    }),
    statuses: [400, 413, 431],
    mayClose: true,
  },
  {
    name: 'request target of 20 KB',
    build: (p) => ({ parts: [crlf([`GET /plants?cursor=${'a'.repeat(20000)} HTTP/1.1`, `Host: ${p.host}`, '', ''])] }),
    statuses: [400, 414, 431],
  },
  {
    name: '3000 headers',
    build: (p) => ({
      parts: [
        crlf([
          'GET /readyz HTTP/1.1',
          `Host: ${p.host}`,
          ...Array.from({ length: 3000 }, (_, i) => `X-H${i}: 1`),
          '',
          '',
        ]),
      ],
    }),
    statuses: [400, 431],
  },
  {
    name: 'absolute-form target naming another host',
    build: (p) => ({ parts: [post(p, `POST http://evil.example/plant/webhook HTTP/1.1`, std(p))] }),
    statuses: [200, 400],
  },
  {
    name: 'pipelined second request smuggled in the body',
    build: (p) => {
      const smuggled = `GET /subscriptions HTTP/1.1\r\nHost: ${p.host}\r\n\r\n`;
      return {
        parts: [
          crlf([
            'POST /plant/webhook HTTP/1.1',
            ...std(p),
            'Content-Length: 0',
            'Transfer-Encoding: chunked',
            '',
            '0',
            '',
            smuggled,
          ]),
        ],
      };
    },
    statuses: REFUSED,
  },
  {
    name: 'HTTP/1.0 keep-alive webhook',
    build: (p) => ({ parts: [post(p, 'POST /plant/webhook HTTP/1.0', [...std(p), 'Connection: keep-alive'])] }),
    statuses: [200],
  },
];
