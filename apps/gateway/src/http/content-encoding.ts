import { Readable, Transform } from 'node:stream';
import zlib from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { ProblemException } from '@app/observability';

/** Content-Encodings a request body may use; `identity` (or no header) is the plain body. */
export const ACCEPTED_ENCODINGS = ['gzip', 'deflate', 'br'] as const;
const decoders: Record<string, () => Transform> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

/**
 * Decodes compressed request bodies before they are parsed, so a gzip body is read as JSON and a plain body
 * labelled gzip is refused rather than read as if it were plain. The body limit applies to the decoded
 * bytes (checked as they come out of the decoder, so a small "zip bomb" stops at the limit), and Fastify
 * checks Content-Length against the encoded bytes. Anything else: 415, naming what is accepted.
 */
export function decodeRequestBodies(fastify: FastifyInstance, maxDecodedBytes: number) {
  fastify.addHook('preParsing', async (req, _reply, payload) => {
    const header = req.headers['content-encoding'];
    const encoding = (typeof header === 'string' ? header : '').trim().toLowerCase();
    if (encoding === '' || encoding === 'identity') return payload;
    const decoder = decoders[encoding]?.();
    if (!decoder) {
      throw ProblemException.of(
        'unsupportedMediaType',
        `Content-Encoding "${header}" is not supported: send the body uncompressed, or encoded with one of ${ACCEPTED_ENCODINGS.join(', ')} (one encoding, not a list)`,
        { acceptedEncodings: [...ACCEPTED_ENCODINGS] },
        { 'accept-encoding': ACCEPTED_ENCODINGS.join(', ') },
      );
    }
    return decodeWithLimit(payload, decoder, encoding, maxDecodedBytes);
  });
}

function decodeWithLimit(source: Readable, decoder: Transform, encoding: string, limit: number): Readable {
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
  source.on('data', (chunk: Buffer) => (limiter.receivedEncodedLength! += chunk.length));
  source.on('error', (err) => limiter.destroy(err));
  // The sender learns the body is not what its header says, rather than "not JSON".
  decoder.on('error', (err: Error & { code?: string }) =>
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
  limiter.on('error', () => source.unpipe(decoder));
  source.pipe(decoder).pipe(limiter);
  return limiter;
}
