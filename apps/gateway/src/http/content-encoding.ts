import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable, Transform } from 'node:stream';
import zlib from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ProblemException } from '@app/observability';
import { passedBeforeBody } from '../auth/before-body';
import { boundBrotliWindow } from './brotli-window';

/** Content-Encodings a request body may use; `identity` (or no header) is the plain body. */
export const ACCEPTED_ENCODINGS = ['gzip', 'deflate', 'br'] as const;
/** The stages each encoding is decoded by, for a body of at most `limit` decoded bytes. */
const decoders: Record<string, (limit: number) => Transform[]> = {
  gzip: () => [zlib.createGunzip()],
  'x-gzip': () => [zlib.createGunzip()],
  deflate: () => [zlib.createInflate()],
  br: (limit) => [
    boundBrotliWindow(limit),
    zlib.createBrotliDecompress({ params: { [zlib.constants.BROTLI_DECODER_PARAM_LARGE_WINDOW]: 0 } }),
  ],
};

/**
 * Decodes compressed request bodies before they are parsed, so a gzip body is read as JSON and a plain body
 * labelled gzip is refused rather than read as if it were plain. The body limit applies to the decoded
 * bytes (checked as they come out of the decoder, so a small "zip bomb" stops at the limit), and Fastify
 * checks Content-Length against the encoded bytes. Anything else: 415, naming what is accepted.
 *
 * Decoding costs memory (a brotli stream may ask for a 16 MiB window) before anything is known about the
 * body, so: only a request its route's guards already let through is decoded (authenticateBeforeBody runs
 * them before the body; a route without a token takes no compressed body); brotli's window is lowered to what
 * the limit needs (brotli-window.ts); at most `maxConcurrent` decoders exist at once (more wait for a turn,
 * within the request timeout); and a decoder is destroyed as soon as its body is done, refused or abandoned.
 */
export function decodeRequestBodies(fastify: FastifyInstance, maxDecodedBytes: number, maxConcurrent: number) {
  const turns = new Turns(maxConcurrent);
  // Callback-style (see framing.ts): a body sent as it is, nearly every one, costs no promise.
  fastify.addHook('preParsing', (req, reply, payload, done) => {
    const header = req.headers['content-encoding'];
    const encoding = (typeof header === 'string' ? header : '').trim().toLowerCase();
    if (encoding === '' || encoding === 'identity') return done(null, payload);
    decode(req, reply, payload, header, encoding).then((decoded) => done(null, decoded), done);
  });

  async function decode(
    req: FastifyRequest,
    reply: FastifyReply,
    payload: Readable,
    header: string | string[] | undefined,
    encoding: string,
  ): Promise<Readable> {
    const decoder = decoders[encoding];
    if (!decoder) {
      throw ProblemException.of(
        'unsupportedMediaType',
        `Content-Encoding "${header}" is not supported: send the body uncompressed, or encoded with one of ${ACCEPTED_ENCODINGS.join(', ')} (one encoding, not a list)`,
        { acceptedEncodings: [...ACCEPTED_ENCODINGS] },
        { 'accept-encoding': ACCEPTED_ENCODINGS.join(', ') },
      );
    }
    if (!passedBeforeBody(req)) {
      throw ProblemException.of(
        'unsupportedMediaType',
        `${req.method} ${req.url.split('?')[0]} takes no compressed body`,
      );
    }
    const release = await turns.take(req.raw, reply.raw);
    const decoded = decodeWithLimit(payload, decoder(maxDecodedBytes), encoding, maxDecodedBytes, release);
    // Only a reader ends a decoder, and some answers never read the body: Fastify's 415 for a content type no
    // parser takes, a method that reads no body, an error before the parser. Such a decoder held its turn for
    // good, and after HTTP_MAX_CONCURRENT_DECODES of them no compressed body was answered again (issue #34's
    // fuzz run). The answer, sent or cut, ends it in every case.
    reply.raw.once('close', () => decoded.destroy());
    return decoded;
  }
}

/**
 * A bounded number of turns; takers wait in order, and one whose request or answer closes while waiting leaves
 * (a request already gone takes no turn).
 */
class Turns {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(count: number) {
    this.free = count;
  }

  async take(req: IncomingMessage, res: ServerResponse): Promise<() => void> {
    const gone = () => Object.assign(new Error('The request closed while waiting to be decoded'), { statusCode: 400 });
    if (req.destroyed || res.closed) throw gone();
    if (this.free > 0) this.free--;
    else {
      await new Promise<void>((resolve, reject) => {
        const turn = () => {
          req.off('close', leave);
          res.off('close', leave);
          resolve();
        };
        const leave = () => {
          req.off('close', leave);
          res.off('close', leave);
          this.waiting.splice(this.waiting.indexOf(turn), 1);
          reject(gone());
        };
        this.waiting.push(turn);
        req.once('close', leave);
        res.once('close', leave);
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
  }
}

function decodeWithLimit(
  source: Readable,
  decoder: Transform[],
  encoding: string,
  limit: number,
  release: () => void,
): Readable {
  let decoded = 0;
  // Counts what comes out of the decoder; Fastify reads from this stage, and compares receivedEncodedLength
  // (the bytes that came off the wire) with Content-Length.
  const limiter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      decoded += chunk.length;
      if (decoded > limit) {
        return done(
          Object.assign(new Error(`The decoded body is larger than ${limit} bytes`), {
            code: 'FST_ERR_CTP_BODY_TOO_LARGE',
            statusCode: 413,
          }),
        );
      }
      done(null, chunk);
    },
  }) as Transform & { receivedEncodedLength?: number };
  limiter.receivedEncodedLength = 0;
  // The body reader stops listening once it has refused the body (too large, or past the body budget): a decoder
  // error after that has no one left to tell, and must not be thrown as an unhandled 'error' (it took the process
  // down). Until then the reader's listener answers it.
  limiter.on('error', () => undefined);
  source.on('data', (chunk: Buffer) => (limiter.receivedEncodedLength! += chunk.length));
  source.on('error', (err) => limiter.destroy(err));
  // A request that ends before its body did (the client went away) leaves nothing decoding.
  source.on('close', () => {
    if (!(source as IncomingMessage).complete) limiter.destroy();
  });
  const stages = [...decoder];
  const last = stages[stages.length - 1];
  // The sender learns the body is not what its header says, rather than "not JSON".
  last.on('error', (err: Error & { code?: string }) =>
    limiter.destroy(
      Object.assign(
        new Error(
          `The body is not valid ${encoding} data (${err.code ?? err.message}); send it uncompressed or fix the Content-Encoding header`,
        ),
        {
          statusCode: 400,
        },
      ),
    ),
  );
  // However the body ends (read, too large, invalid, abandoned), the decoder's memory goes now, not at the next
  // garbage collection, and the turn passes on.
  limiter.once('close', () => {
    source.unpipe(stages[0]);
    for (const stage of stages) stage.destroy();
    release();
  });
  let piped: Readable = source;
  for (const stage of stages) piped = piped.pipe(stage);
  piped.pipe(limiter);
  return limiter;
}
