import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The gateway's header and body checks, as the baselines of bench:gateway do them: the bearer token, an integer
 * id and a string name. Answers 401 or 422 and returns false when one fails.
 */
export function passesChecks(req: FastifyRequest, reply: FastifyReply): boolean {
  if (req.headers.authorization !== `Bearer ${process.env.TOKEN}`) {
    void reply.code(401).send();
    return false;
  }
  const b = req.body as { id?: unknown; name?: unknown } | null;
  if (!b || !Number.isSafeInteger(b.id) || (b.id as number) < 1 || typeof b.name !== 'string') {
    void reply.code(422).send();
    return false;
  }
  return true;
}
