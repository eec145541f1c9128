import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ProblemException, sendProblem } from '@app/observability';

/**
 * The operator console (apps/console, built by Vite into dist/console), served at /console. Every page URL
 * (/console/deliveries?…, reloaded or shared) gets the app's index.html; its script and styles come from
 * /console/assets. A strict Content-Security-Policy: only this origin's files, no inline script or style
 * attribute, calls only to this gateway (the admin API, with the token the operator pasted).
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY', // frame-ancestors, for browsers without CSP 3
  'referrer-policy': 'no-referrer',
};

export async function serveConsole(fastify: FastifyInstance): Promise<void> {
  const dir = consoleDir();
  const index = dir ? readFileSync(path.join(dir, 'index.html'), 'utf8') : null;
  const page = async (req: FastifyRequest, reply: FastifyReply) => {
    if (!index)
      return sendProblem(
        reply,
        req,
        ProblemException.of(
          'unavailable',
          'The console was not built: run `npm run build:console` (npm start and npm run build do it)',
        ),
      );
    return reply.headers(SECURITY_HEADERS).header('cache-control', 'no-cache').type('text/html').send(index);
  };
  fastify.get('/console', page);
  fastify.get('/console/*', async (req, reply) => {
    if (req.url.startsWith('/console/assets/')) return reply.callNotFound();
    return page(req, reply);
  });
  if (dir)
    await fastify.register(fastifyStatic, {
      root: path.join(dir, 'assets'),
      prefix: '/console/assets/',
      decorateReply: false, // Swagger UI's registration already decorates the reply
      immutable: true,
      preCompressed: true, // the .br and .gz copies the build made, to browsers that accept them
      maxAge: '365d', // file names carry a content hash
      setHeaders: (res) => {
        for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
      },
    });
}

/** dist/console beside the running code, found from the project root (the same from src/ under jest). */
function consoleDir(): string | null {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) {
      const built = path.join(dir, 'dist', 'console');
      return existsSync(path.join(built, 'index.html')) ? built : null;
    }
  }
  return null;
}
