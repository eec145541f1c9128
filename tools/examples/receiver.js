#!/usr/bin/env node
// @ts-check
// A subscriber for the walk-through: listens on a port, verifies each New Plant delivery's Standard Webhooks
// signature with the `standardwebhooks` library (as any subscriber would), and prints what arrived.
//   WEBHOOK_SECRET=whsec_… node tools/examples/receiver.js 4000
const http = require('node:http');
const { Webhook } = require('standardwebhooks');

const port = Number(process.argv[2] ?? 4000);
const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WEBHOOK_SECRET to the whsec_… secret that POST /subscriptions returned.');
  process.exit(2);
}
const verifier = new Webhook(secret);

http
  .createServer((req, res) => {
    /** @type {Buffer[]} */
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      try {
        const plant = verifier.verify(body, /** @type {Record<string, string>} */ (req.headers));
        console.log(`verified ${req.headers['webhook-id']}: ${JSON.stringify(plant)}`);
        res.writeHead(204).end();
      } catch (err) {
        console.log(`REFUSED (${err.message}): ${body}`);
        res.writeHead(401).end();
      }
    });
  })
  .listen(port, '127.0.0.1', () => console.log(`receiver listening on http://127.0.0.1:${port}/hook`));
