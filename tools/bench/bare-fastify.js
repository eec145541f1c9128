// The baseline of bench:gateway: a bare Fastify route doing the gateway's header and body checks, no Nest and no
// Kafka. Run in its own process (forked by gateway.js), like the gateway, and reports its port to the parent.
const fastify = require('fastify')({ logger: false });

fastify.post('/plant/webhook', async (req, reply) => {
  if (req.headers.authorization !== `Bearer ${process.env.TOKEN}`) return reply.code(401).send();
  const b = req.body;
  if (!b || !Number.isSafeInteger(b.id) || b.id < 1 || typeof b.name !== 'string') return reply.code(422).send();
  return { eventId: 'x' };
});

fastify.listen({ port: 0, host: '127.0.0.1' }).then(() => process.send(fastify.server.address().port));
