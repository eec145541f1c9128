import http from 'node:http';
import type { Socket } from 'node:net';
import { problemOf, PROBLEM_CONTENT_TYPE, ProblemKindName } from '@app/observability';
import { GatewayMetrics } from '../metrics/gateway-metrics';

/** Longest request head or chunk-size line followed; past it llhttp refuses anyway (431, or its 16 KiB cap). */
const MAX_LINE_BYTES = 64 * 1024;

/**
 * RFC 9112 §3: method SP request-target SP HTTP-version, each space a single one. llhttp serves a request line
 * without a version (HTTP/0.9, answered 200) and one with two spaces between its parts, which a front proxy may
 * read, route or forward differently. The version's digits are judged later (505 in framing.ts, 400 by llhttp);
 * bytes of the target are llhttp's to judge too: only the line's structure is checked here.
 */
const REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ [\x21-\x7e\x80-\xff]+ HTTP\/\d\.\d$/;

/** Connections refused here; a request llhttp still parsed from their bytes is never served (see framing.ts). */
const refusedConnections = new WeakSet<Socket>();

export const isRefusedConnection = (socket: Socket | null | undefined) =>
  socket != null && refusedConnections.has(socket);

/** Each connection's follower, for the request listener below to tell it of an answer sent early. */
const followers = new WeakMap<Socket, ChunkFollower>();

/**
 * A request line that is not exactly `METHOD SP request-target SP HTTP/x.y` is refused with 400 (see REQUEST_LINE),
 * and a chunked body that declares a chunk larger than the body limit is refused with 413 as soon as the chunk-size
 * line arrives, as a Content-Length over the limit is, instead of being read (and waited for, until the request
 * timeout) up to the limit. Node does not show chunk sizes to JavaScript, so this follows each connection's
 * bytes before llhttp reads them: request heads (for Content-Length and Transfer-Encoding), chunk-size lines and
 * the bytes in between. It only observes and refuses; it never changes what llhttp reads. Should it lose track of
 * the framing (anything it does not expect), it stops following that connection, and llhttp, which refuses
 * malformed framing itself, stays the judge.
 */
export function refuseOversizedChunks(server: http.Server, limit: number, metrics: GatewayMetrics): void {
  server.on('connection', (socket: Socket) => {
    const follower = new ChunkFollower(limit);
    followers.set(socket, follower);
    // Listening for 'data' makes Node hand the socket's bytes to its parser from JavaScript (it "unconsumes"):
    // prepended, this listener sees each chunk before the parser does.
    const onData = (data: Buffer) => {
      const verdict = follower.push(data);
      if (verdict === 'lost') socket.off('data', onData);
      else if (verdict === 'too-large') {
        socket.off('data', onData);
        metrics.clientErrors.inc({ kind: 'chunk_too_large' });
        refuse(
          socket,
          413,
          'payloadTooLarge',
          `A chunk of the body is declared larger than ${limit} bytes, the body limit; send a smaller body`,
          !follower.answeredThisRequest, // answered already (a GET carrying a body): closed, no second answer
        );
      } else if (verdict === 'bad-request-line') {
        socket.off('data', onData);
        metrics.clientErrors.inc({ kind: 'ambiguous_framing' });
        refuse(
          socket,
          400,
          'badRequest',
          'The request line is not "METHOD SP target SP HTTP/1.1" with single spaces (RFC 9112 §3); send it so',
        );
      }
    };
    socket.prependListener('data', onData);
  });
  // A request may be answered before its body is in (a GET carrying one, a refusal): if its chunks pass the limit
  // afterwards, the connection is closed without a second answer to the one request (found by the fuzzer: a
  // second answer is a desync for a proxy in front). Only chunked requests pay for the listener. Prepended: a hook
  // answers inside Fastify's own 'request' listener (a token in the query string, refused at onRequest), and an
  // answer written before this listener ran kept the connection open while its body was still coming, then the
  // body passing the limit closed it under the sender's next request (the fuzzer, seed 1571143708).
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.headers['transfer-encoding'] === undefined) return;
    // Answered before its body is over: `Connection: close` on that answer (RFC 9112 §9.6), so the sender sends no
    // further request on a connection whose body it may still be writing (the fuzzer's next request met the
    // close); Node then closes it after the answer, lingering (lingering-close.ts).
    const writeHead = res.writeHead;
    res.writeHead = function (this: http.ServerResponse, ...args: Parameters<typeof writeHead>) {
      if (!req.complete) this.shouldKeepAlive = false;
      return writeHead.apply(this, args);
    } as typeof writeHead;
    res.once('finish', () => {
      // The follower reads each byte just before llhttp does, so it is in this request's body now.
      if (!req.complete) followers.get(req.socket)?.answered();
    });
  });
}

function refuse(socket: Socket, status: number, kind: ProblemKindName, detail: string, answer = true) {
  // llhttp still parses the bytes this listener saw (they cannot be withheld from it): the connection is marked
  // so that no request read from it is served, only this answer.
  refusedConnections.add(socket);
  const body = JSON.stringify(problemOf(kind, detail));
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (answer && socket.writable && !inFlight) {
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroySoon();
}

type Verdict = 'ok' | 'too-large' | 'bad-request-line' | 'lost';
type State = 'head' | 'body' | 'chunk-size' | 'chunk-data' | 'chunk-end' | 'trailers';

/**
 * Follows HTTP/1.1 request framing on one connection; says when a request line is malformed or a chunk is
 * declared over the limit.
 */
export class ChunkFollower {
  private state: State = 'head';
  private line = Buffer.alloc(0); // the head or line being gathered
  private remaining = 0; // bytes of a Content-Length body or of a chunk still to skip
  private declared = 0; // chunk bytes declared so far in this body
  private heads = 0; // request heads read on this connection
  private answeredHead = 0; // the one answered before its body was over (0: none)

  constructor(private readonly limit: number) {}

  /** The request being read was answered before its body was over. */
  answered() {
    this.answeredHead = this.heads;
  }

  /** Whether the request being read is one answered already (see answered). */
  get answeredThisRequest(): boolean {
    return this.heads > 0 && this.answeredHead === this.heads;
  }

  push(data: Buffer): Verdict {
    let at = 0;
    while (at < data.length) {
      if (this.state === 'body' || this.state === 'chunk-data') {
        const take = Math.min(this.remaining, data.length - at);
        at += take;
        this.remaining -= take;
        if (this.remaining === 0) this.state = this.state === 'body' ? 'head' : 'chunk-end';
        continue;
      }
      // The other states read up to a line end (the head: up to its empty line). A line split across reads is
      // carried over; only then is anything copied, and never more than MAX_LINE_BYTES.
      const end = this.state === 'head' ? '\r\n\r\n' : '\r\n';
      const piece = this.line.length === 0 ? data : data.subarray(at, at + MAX_LINE_BYTES + end.length);
      const from = this.line.length === 0 ? at : 0;
      const gathered = this.line.length === 0 ? data : Buffer.concat([this.line, piece]);
      const found = gathered.indexOf(end, Math.max(from, this.line.length - end.length + 1));
      if (found < 0) {
        if (gathered.length - from > MAX_LINE_BYTES) return 'lost';
        this.line = Buffer.from(gathered.subarray(from));
        return 'ok';
      }
      const text = gathered.toString('latin1', from, found);
      at = this.line.length === 0 ? found + end.length : at + found + end.length - this.line.length;
      this.line = Buffer.alloc(0);
      const verdict = this.step(text);
      if (verdict !== 'ok') return verdict;
    }
    return 'ok';
  }

  private step(text: string): Verdict {
    switch (this.state) {
      case 'head': {
        // A request may be preceded by empty lines (RFC 9112 §2.2).
        const lines = (text.startsWith('\r\n') ? text.replace(/^(\r\n)+/, '') : text).split('\r\n');
        if (lines.length === 1 && lines[0] === '') return 'ok'; // empty lines only: the request follows
        this.heads++;
        if (!REQUEST_LINE.test(lines[0])) return 'bad-request-line';
        const fields = framingFields(lines);
        const field = (name: FramingField) => fields.get(name) ?? NONE;
        // After CONNECT or an Upgrade the bytes are no longer HTTP (the gateway accepts neither). An Upgrade
        // header without "Connection: upgrade" is no upgrade: llhttp goes on reading requests, and so does this.
        const upgrade =
          field('upgrade').length > 0 && field('connection').some((c) => /(^|,)\s*upgrade\s*(,|$)/i.test(c));
        if (/^CONNECT /i.test(lines[0]) || upgrade) return 'lost';
        const te = field('transfer-encoding');
        const cl = field('content-length');
        if (te.length > 0) {
          if (te.length > 1 || te[0].toLowerCase() !== 'chunked' || cl.length > 0) return 'lost';
          this.state = 'chunk-size';
          this.declared = 0;
        } else if (cl.length > 0) {
          if (cl.length > 1 || !/^\d{1,15}$/.test(cl[0])) return 'lost';
          this.remaining = Number(cl[0]);
          if (this.remaining > 0) this.state = 'body';
        }
        return 'ok';
      }
      case 'chunk-size': {
        const size = /^([0-9A-Fa-f]+)[ \t]*(;.*)?$/.exec(text)?.[1];
        if (size === undefined) return 'lost';
        // A size too long for a number is over the limit too (llhttp refuses it as an overflow).
        const bytes = size.replace(/^0+/, '').length > 13 ? Infinity : parseInt(size, 16);
        this.declared += bytes;
        if (this.declared > this.limit) return 'too-large';
        this.remaining = bytes;
        this.state = bytes === 0 ? 'trailers' : 'chunk-data';
        return 'ok';
      }
      case 'chunk-end':
        if (text !== '') return 'lost';
        this.state = 'chunk-size';
        return 'ok';
      case 'trailers':
        if (text === '') this.state = 'head';
        return 'ok';
      default:
        return 'lost';
    }
  }
}

type FramingField = 'upgrade' | 'connection' | 'transfer-encoding' | 'content-length';
const FRAMING_FIELDS = new Set<string>(['upgrade', 'connection', 'transfer-encoding', 'content-length']);
const NONE: string[] = [];

/**
 * The values of the four fields that decide framing, from a head's lines (the request line first), each trimmed,
 * in order. One pass, lower-casing only a name as long as one of them: this runs for every request on the
 * gateway's hot path, ahead of llhttp.
 */
function framingFields(lines: string[]): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    const colon = line.indexOf(':');
    if (colon < 7 || colon > 17) continue; // 'upgrade' is the shortest name, 'transfer-encoding' the longest
    const name = line.slice(0, colon).toLowerCase();
    if (!FRAMING_FIELDS.has(name)) continue;
    const values = found.get(name) ?? [];
    values.push(line.slice(colon + 1).trim());
    found.set(name, values);
  }
  return found;
}
