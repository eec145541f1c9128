// The baseline of bench:gateway: a bare Fastify route doing the gateway's header and body checks, no Nest and no
// Kafka. Run in its own process (forked by gateway.ts), like the gateway, and reports its port to the parent.
import Fastify from 'fastify';
import { AddressInfo } from 'node:net';

const fastify = Fastify({ logger: false });

fastify.post('/plant/webhook', async (req, reply) => {
  if (req.headers.authorization !== `Bearer ${process.env.TOKEN}`) return reply.code(401).send();
  const b = req.body as { id?: unknown; name?: unknown } | null;
  if (!b || !Number.isSafeInteger(b.id) || (b.id as number) < 1 || typeof b.name !== 'string')
    return reply.code(422).send();
  return { eventId: 'x' };
});

void fastify
  .listen({ port: 0, host: '127.0.0.1' })
  .then(() => process.send!((fastify.server.address() as AddressInfo).port));
