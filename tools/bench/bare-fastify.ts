// The baseline of bench:gateway: a bare Fastify route doing the gateway's header and body checks, no Nest and no
// Kafka. Run in its own process (forked by gateway.ts), like the gateway, and reports its port to the parent.
import Fastify from 'fastify';
import { AddressInfo } from 'node:net';
import { passesChecks } from './webhook-checks';

const fastify = Fastify({ logger: false });

fastify.post('/plant/webhook', async (req, reply) => {
  if (!passesChecks(req, reply)) return reply;
  return { eventId: 'x' };
});

void fastify
  .listen({ port: 0, host: '127.0.0.1' })
  .then(() => process.send!((fastify.server.address() as AddressInfo).port));
