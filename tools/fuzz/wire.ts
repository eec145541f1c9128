// The fuzzer's HTTP/1.1 client: raw sockets, so a request goes on the wire exactly as generated (two Host
// headers, an HTTP/2.0 request line, a chunk size no body follows), and the answer is read byte by byte, so
// anything the gateway sends after its response (a second answer to one request) is seen too.
import net from 'node:net';

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** What the gateway sent after this response's last byte, before we stopped listening. */
  trailing: number;
  /** The gateway will close the connection after this answer. */
  closes: boolean;
  ms: number;
}

/** What came back: an answer, the connection closed first, or nothing before the deadline. */
export type Outcome =
  { kind: 'answer'; answer: Answer } | { kind: 'closed'; ms: number } | { kind: 'timeout'; ms: number };

export interface Exchange {
  /** The bytes to send; several parts are written apart (a body that follows its head later). */
  parts: Buffer[];
  /** No answer within this many ms: a timeout. */
  deadlineMs: number;
  /** A HEAD request: its answer has no body whatever its Content-Length says. */
  head?: boolean;
  /** Half-close our side once everything is written (a client that stops sending mid-body). */
  endAfter?: boolean;
}

/** One keep-alive connection, reused until an answer closes it or a request leaves it in doubt. */
export class Lane {
  private socket: net.Socket | null = null;
  private buffer = Buffer.alloc(0);
  private closed = false;
  private wake: (() => void) | null = null;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  async send(x: Exchange): Promise<Outcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const socket = await this.connect();
    if (!socket) return { kind: 'closed', ms: elapsed() };
    for (const [i, part] of x.parts.entries()) {
      if (i > 0) await new Promise((r) => setTimeout(r, 5));
      if (!socket.destroyed) socket.write(part);
    }
    if (x.endAfter && !socket.destroyed) socket.end();
    const deadline = started + x.deadlineMs;
    let answer: Answer | null = null;
    for (;;) {
      const parsed = parseAnswer(this.buffer, x.head ?? false, this.closed);
      if (parsed === 'invalid') break;
      if (parsed) {
        this.buffer = this.buffer.subarray(parsed.length);
        if (parsed.status >= 200) {
          answer = { ...parsed.answer, ms: elapsed(), trailing: 0 };
          break;
        }
        continue; // 100 Continue and other interim answers: the final one follows
      }
      if (this.closed) break;
      const left = deadline - performance.now();
      if (left <= 0) {
        this.drop();
        return { kind: 'timeout', ms: elapsed() };
      }
      await this.waitForData(left);
    }
    if (!answer) {
      this.drop();
      return { kind: 'closed', ms: elapsed() };
    }
    if (answer.closes || x.endAfter) {
      // Whatever else the gateway sends before it closes belongs to no request of ours.
      await this.waitForClose(200);
      answer.trailing = this.buffer.length;
      this.drop();
    } else if (this.buffer.length > 0) {
      answer.trailing = this.buffer.length;
      this.drop();
    }
    return { kind: 'answer', answer };
  }

  close() {
    this.drop();
  }

  /** Whether a connection is open to be reused (the next send goes on it). */
  isOpen(): boolean {
    return this.socket !== null && !this.closed;
  }

  private async connect(): Promise<net.Socket | null> {
    if (this.socket && !this.closed) return this.socket;
    this.drop();
    const socket = net.connect(this.port, this.host);
    this.socket = socket;
    this.closed = false;
    this.buffer = Buffer.alloc(0);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake?.();
    });
    const gone = () => {
      if (this.socket !== socket) return;
      this.closed = true;
      this.wake?.();
    };
    socket.on('close', gone);
    socket.on('error', gone);
    socket.on('end', gone);
    const ok = await new Promise<boolean>((resolve) => {
      socket.once('connect', () => resolve(true));
      socket.once('error', () => resolve(false));
    });
    return ok ? socket : null;
  }

  private waitForData(ms: number) {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
    });
  }

  private async waitForClose(ms: number) {
    const until = performance.now() + ms;
    while (!this.closed && performance.now() < until) await this.waitForData(until - performance.now());
  }

  private drop() {
    if (this.socket) this.socket.destroy();
    this.socket = null;
    this.closed = true;
    this.buffer = Buffer.alloc(0);
  }
}

type Parsed = { status: number; length: number; answer: Omit<Answer, 'ms' | 'trailing'> };

/** One complete response at the start of `buf`, null if more bytes are needed, 'invalid' if it is not HTTP. */
export function parseAnswer(buf: Buffer, head: boolean, closed: boolean): Parsed | null | 'invalid' {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return buf.length >= 5 && buf.subarray(0, 5).toString('latin1') !== 'HTTP/' ? 'invalid' : null;
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
  if (!m) return 'invalid';
  const status = Number(m[1]);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i <= 0) return 'invalid';
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  const start = end + 4;
  const closes = /\bclose\b/i.test(headers.connection ?? '');
  const done = (bodyEnd: number, body: Buffer): Parsed => ({
    status,
    length: bodyEnd,
    answer: { status, headers, body, closes },
  });
  if (head || status < 200 || status === 204 || status === 304) return done(start, Buffer.alloc(0));
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const chunks: Buffer[] = [];
    let at = start;
    for (;;) {
      const lineEnd = buf.indexOf('\r\n', at);
      if (lineEnd < 0) return null;
      const size = parseInt(buf.subarray(at, lineEnd).toString('latin1').split(';')[0], 16);
      if (Number.isNaN(size)) return 'invalid';
      if (size === 0) {
        // The last chunk's line ends the body, then optional trailers, then an empty line.
        const trailerEnd = buf.indexOf('\r\n\r\n', lineEnd);
        return trailerEnd < 0 ? null : done(trailerEnd + 4, Buffer.concat(chunks));
      }
      if (buf.length < lineEnd + 2 + size + 2) return null;
      chunks.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    if (!Number.isSafeInteger(length)) return 'invalid';
    if (buf.length < start + length) return null;
    return done(start + length, buf.subarray(start, start + length));
  }
  // Neither: the body runs until the connection closes.
  return closed ? done(buf.length, buf.subarray(start)) : null;
}
