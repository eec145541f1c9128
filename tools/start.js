#!/usr/bin/env node
// @ts-check
// `npm start`: installs what is missing, brings up Kafka and PostgreSQL unless KAFKA_BROKERS / DATABASE_URL
// are set, builds, runs the gateway and the worker, and stops everything it started on Ctrl-C or SIGTERM.
const { randomBytes } = require('node:crypto');
const { ensureDependencies, build } = require('./local-stack/deps');

async function main() {
  ensureDependencies();
  const { bringUp } = require('./local-stack');
  const { step, info } = require('./local-stack/progress');
  const { runApp, waitReady, stopProcess } = require('./local-stack/apps');

  const generated = (v) => v || randomBytes(24).toString('base64url');
  const env = {
    PORT: process.env.PORT || '3000',
    METRICS_PORT: process.env.METRICS_PORT || '9465',
    WORKER_METRICS_PORT: process.env.WORKER_METRICS_PORT || '9464',
    WEBHOOK_TOKENS: generated(process.env.WEBHOOK_TOKENS),
    ADMIN_TOKENS: generated(process.env.ADMIN_TOKENS),
    DELIVERY_ALLOW_PRIVATE_NETWORKS: process.env.DELIVERY_ALLOW_PRIVATE_NETWORKS || 'true',
  };

  const stack = await bringUp('dev');
  Object.assign(env, stack.env);
  let children = [];
  let stopping = false;
  const stopAll = async (code) => {
    if (stopping) return;
    stopping = true;
    const s = step('Stopping gateway and worker');
    await Promise.all(children.map((c) => stopProcess(c, 30000)));
    s.done();
    await stack.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));

  try {
    build();
    const s = step('Starting gateway and worker (migrations run as they start)');
    const gateway = runApp('gateway', env);
    const worker = runApp('worker', env);
    children = [gateway, worker];
    for (const c of children)
      c.once('exit', (code) => !stopping && (info(`a service exited (code ${code}); stopping`), stopAll(1)));
    await waitReady(`http://127.0.0.1:${env.PORT}/readyz`, gateway, 'gateway');
    await waitReady(`http://127.0.0.1:${env.WORKER_METRICS_PORT}/readyz`, worker, 'worker');
    s.done();
  } catch (err) {
    console.error(err.message);
    return stopAll(1);
  }

  const url = `http://127.0.0.1:${env.PORT}`;
  const webhookToken = env.WEBHOOK_TOKENS.split(',')[0].trim();
  const adminToken = env.ADMIN_TOKENS.split(',')[0].trim();
  console.log(`
Plant Store is up.
  gateway        ${url}   (docs ${url}/docs, document ${url}/openapi.json, metrics http://127.0.0.1:${env.METRICS_PORT}/metrics)
  worker         http://127.0.0.1:${env.WORKER_METRICS_PORT}/readyz and /metrics
  webhook token  ${webhookToken}${process.env.WEBHOOK_TOKENS ? '' : '   (generated: set WEBHOOK_TOKENS to choose your own)'}
  admin token    ${adminToken}${process.env.ADMIN_TOKENS ? '' : '   (generated: set ADMIN_TOKENS to choose your own)'}
${env.DELIVERY_ALLOW_PRIVATE_NETWORKS === 'true' ? '  WARNING        DELIVERY_ALLOW_PRIVATE_NETWORKS=true: subscribers on private/loopback addresses are allowed (local development only)\n' : ''}
Send a New Plant:
  curl -i -X POST ${url}/plant/webhook \\
    -H 'Authorization: Bearer ${webhookToken}' -H 'Content-Type: application/json' \\
    -H 'webhook-id: msg_1' -d '{"id": 1, "name": "Monstera", "tag": "indoor"}'
Then read it back from the store:
  curl -H 'Authorization: Bearer ${webhookToken}' ${url}/plants/1

Ctrl-C stops everything.
`);
}

main().catch((err) => {
  console.error(err.stack || err.message);
  process.exit(1);
});
