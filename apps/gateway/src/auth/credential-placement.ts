import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { ProblemException, sendProblem } from '@app/observability';
import { REALM } from './bearer.strategies';

/** Names under which clients put bearer tokens outside the Authorization header (RFC 6750 §2.2 and §2.3). */
const TOKEN_FIELDS = ['access_token'];

function refuse(where: string): ProblemException {
  return ProblemException.of(
    'badRequest',
    `A bearer token was sent in the ${where}. Tokens are accepted only in the header "Authorization: Bearer <token>"; ` +
      `remove it from the ${where}, and rotate it if it may have been logged on the way.`,
    {},
    { 'www-authenticate': `Bearer realm="${REALM}", error="invalid_request"` },
  );
}

const carriesToken = (value: unknown) =>
  typeof value === 'object' &&
  value !== null &&
  TOKEN_FIELDS.some((f) => Object.prototype.hasOwnProperty.call(value, f));

/**
 * Refuses, on every route, a request that carries a token in its query string or its JSON body: it is never
 * used to authenticate, and a body holding one is never published (it would be written to Kafka with the
 * event and forwarded to subscribers). 400 invalid_request, as RFC 6750 §3.1 names it.
 */
export function refuseMisplacedCredentials(fastify: FastifyInstance) {
  // Callback-style (see framing.ts): Fastify stops the chain once a hook has answered.
  fastify.addHook('onRequest', (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    if (carriesToken(req.query)) sendProblem(reply, req, refuse('query string'));
    done();
  });
  fastify.addHook('preHandler', (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    if (carriesToken(req.body)) sendProblem(reply, req, refuse('body'));
    done();
  });
}
