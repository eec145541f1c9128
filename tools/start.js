#!/usr/bin/env node
// @ts-check
// `npm start`: installs what is missing, brings up Kafka and PostgreSQL unless KAFKA_BROKERS / DATABASE_URL
// are set, builds, runs the worker and the gateway, restarts whatever exits on its own (with back-off), and
// stops everything it started, and only that, on Ctrl-C or SIGTERM.
const { randomBytes } = require('node:crypto');
const { ensureDependencies } = require('./local-stack/deps');
const { registerTypeScript } = require('./local-stack/typescript');

/** Stops everything this launcher started: nothing until its TypeScript is loaded (npm ci failed, say). */
let stopEverything = () => Promise.resolve();

/**
 * The key that seals subscriber secrets in the local database, made once and kept beside that database in the
 * git-ignored .local/ (the data outlives a run, so must the key). Production sets SECRETS_KEY itself.
 */
function localSecretsKey() {
  const fs = require('node:fs');
  const path = require('node:path');
  const { LOCAL } = require('./local-stack/paths');
  const file = path.join(LOCAL, 'secrets.key');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(LOCAL, { recursive: true });
    fs.writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  }
  return fs.readFileSync(file, 'utf8').trim();
}

async function main() {
  ensureDependencies();
  registerTypeScript(); // the rest of the launcher is TypeScript
  const { bringUp } = require('./local-stack');
  const { build } = require('./local-stack/build');
  const { step, info } = require('./local-stack/progress');
  const { appService } = require('./local-stack/apps');
  stopEverything = require('./local-stack/supervisor').stopEverything;

  const generated = (/** @type {string | undefined} */ v) => v || randomBytes(24).toString('base64url');
  const env = {
    PORT: process.env.PORT || '3000',
    METRICS_PORT: process.env.METRICS_PORT || '9465',
    WORKER_METRICS_PORT: process.env.WORKER_METRICS_PORT || '9464',
    WEBHOOK_TOKENS: generated(process.env.WEBHOOK_TOKENS),
    ADMIN_TOKENS: generated(process.env.ADMIN_TOKENS),
    DELIVERY_ALLOW_PRIVATE_NETWORKS: process.env.DELIVERY_ALLOW_PRIVATE_NETWORKS || 'true',
    SECRETS_KEY: process.env.SECRETS_KEY || localSecretsKey(),
    LOG_FORMAT: process.env.LOG_FORMAT || 'pretty', // a person reads this terminal; LOG_FORMAT=json for machines
  };

  // Installed before anything starts: Ctrl-C while the broker is still starting stops it too.
  let stopping = false;
  const stopAll = async (/** @type {number} */ code) => {
    if (stopping) return;
    stopping = true;
    info('Stopping everything this launcher started');
    await stopEverything();
    info('Stopped');
    process.exit(code);
  };
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));

  try {
    // Supervised like Kubernetes would: a broker, database or app that exits on its own is logged and
    // restarted with back-off while the rest keeps running.
    /** @type {[keyof typeof env, string][]} */
    const ports = [
      ['PORT', 'The gateway'],
      ['METRICS_PORT', "The gateway's metrics"],
      ['WORKER_METRICS_PORT', "The worker's health and metrics"],
    ];
    const appPorts = ports.map(([name, what]) => ({
      port: Number(env[name]),
      what,
      remedy: `Stop it, or choose another port with ${name}=…`,
    }));
    const stack = await bringUp('dev', process.env, { restart: true, appPorts });
    Object.assign(env, stack.env);
    if (!process.argv.includes('--no-build')) await build(); // --no-build: the launcher's tests, after npm test built
    const s = step('Starting worker, then gateway (the worker migrates and creates the topics)');
    const worker = appService('worker', env, {
      readyUrl: `http://127.0.0.1:${env.WORKER_METRICS_PORT}/readyz`,
      restart: true,
      owner: 'dev',
    });
    const gateway = appService('gateway', env, {
      readyUrl: `http://127.0.0.1:${env.PORT}/readyz`,
      restart: true,
      owner: 'dev',
    });
    await worker.start();
    await gateway.start();
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
Send a New Plant (a new webhook-id for each new webhook; a retry reuses its own):
  curl -i -X POST ${url}/plant/webhook \\
    -H 'Authorization: Bearer ${webhookToken}' -H 'Content-Type: application/json' \\
    -H "webhook-id: msg_$(date +%s%N)" -d '{"id": 1, "name": "Monstera", "tag": "indoor"}'
Read it back from the store:
  curl -H 'Authorization: Bearer ${webhookToken}' ${url}/plants/1
Subscribe a receiver (its whsec_ secret is in the answer, shown once):
  curl -s -X POST ${url}/subscriptions -H 'Authorization: Bearer ${adminToken}' \\
    -H 'Content-Type: application/json' -d '{"url": "http://127.0.0.1:4000/hook"}'
Run a receiver that verifies each delivery's signature, then send another plant:
  WEBHOOK_SECRET=whsec_... node tools/examples/receiver.js 4000
List the deliveries:
  curl -H 'Authorization: Bearer ${adminToken}' '${url}/deliveries?limit=5'
Browse the API (Try it out works): ${url}/docs

Ctrl-C stops everything.
`);
}

main().catch(async (err) => {
  // An Error's message says what to do; a stack is for what nobody foresaw.
  console.error(err instanceof Error ? err.message : String(err));
  await stopEverything();
  process.exit(1);
});
