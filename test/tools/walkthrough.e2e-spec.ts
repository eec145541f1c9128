import { ChildProcess, execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as e2e from '../../tools/harness/stack';
import { OwnStack, startOwnStack } from '../../tools/harness/own-stack';
import { freePort } from '../../tools/harness/processes';
import { waitFor } from '../../tools/harness/wait';

// The README's walk-through, run as written: its curl commands through bash against a real gateway and worker
// (only the address changed), and the example receiver verifying the signed delivery with standardwebhooks. On a
// database and topics of its own: its worker sends this suite's deliveries alone, and the deliveries it lists are
// its own.

const ROOT = path.resolve(__dirname, '../..');
const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const block = readme.slice(readme.indexOf('Try it, with the two tokens')).split('```bash\n')[1].split('```')[0];
/** The block's commands, continuation lines joined, comments and placeholders left out. */
const commands = block
  .replace(/\\\n\s*/g, '')
  .split('\n')
  .filter((l) => l.startsWith('curl'));

describe('the README walk-through', () => {
  let stack: OwnStack;
  let gateway: e2e.RunningGateway;
  let receiver: ChildProcess | null = null;
  let printed = '';
  let receiverPort: number;

  beforeAll(async () => {
    stack = await startOwnStack('walkthrough');
    gateway = stack.gateway;
    receiverPort = await freePort();
  });

  afterAll(async () => {
    receiver?.kill();
    await stack?.close();
  });

  const id = e2e.plantIds()();
  // Asynchronously: the gateway answering these requests runs in this very process.
  const run = async (command: string) =>
    (
      await promisify(execFile)(
        'bash',
        [
          '-c',
          command
            .replaceAll('http://127.0.0.1:3000', gateway.url)
            .replaceAll('127.0.0.1:4000', `127.0.0.1:${receiverPort}`)
            .replaceAll('"id": 1,', `"id": ${id},`)
            .replaceAll('/plants/1', `/plants/${id}`),
        ],
        {
          env: { ...process.env, TOKEN: e2e.WEBHOOK_TOKEN, ADMIN: e2e.ADMIN_TOKEN },
          encoding: 'utf8',
          timeout: 15_000,
        },
      )
    ).stdout;

  it('sends, reads back, subscribes, delivers a verified signature and lists it', async () => {
    expect(commands).toHaveLength(4);
    const [send, read, subscribe, list] = commands;
    expect(await run(send)).toMatch(/^HTTP\/1.1 200/);
    await waitFor('the plant stored', async () => JSON.parse(await run(read)).name === 'Monstera' || null, 20_000);

    const subscription = JSON.parse(await run(subscribe));
    expect(subscription.secret).toMatch(/^whsec_/);
    receiver = spawn(process.execPath, [path.join(ROOT, 'tools/examples/receiver.js'), String(receiverPort)], {
      env: { ...process.env, WEBHOOK_SECRET: subscription.secret },
    });
    receiver.stdout!.on('data', (d) => (printed += String(d)));
    await waitFor('the receiver', () => printed.includes('listening'), 10_000);

    // Step 5: step 1 again for another plant, with a webhook-id of its own.
    const second = id + 1;
    expect(await run(send.replaceAll('"id": 1,', `"id": ${second},`))).toMatch(/^HTTP\/1.1 200/);
    await waitFor('the verified delivery', () => printed.includes(`"id":${second}`), 20_000);
    const line = printed.split('\n').find((l) => l.includes(`"id":${second}`))!;
    expect(line).toMatch(/^verified [0-9a-f-]{36}: \{/);
    expect(JSON.parse(line.slice(line.indexOf('{')))).toEqual({ id: second, name: 'Monstera', tag: 'indoor' });
    expect(printed).not.toContain('REFUSED');
    const deliveries = JSON.parse(await run(list));
    expect(deliveries.items.some((d: { subscriptionId: string }) => d.subscriptionId === subscription.id)).toBe(true);
  });
});
