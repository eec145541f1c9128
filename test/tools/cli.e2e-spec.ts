import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OwnStack, startOwnStack } from '../../tools/harness/own-stack';
import { Receiver } from '../../tools/harness/receiver';
import * as e2e from '../../tools/harness/stack';
import { waitFor } from '../../tools/harness/wait';

const CLI = path.resolve(__dirname, '../../cli/plant-store.js');

// `npx plant-store` against a real gateway and worker: what an operator types, and what a script relies on. On a
// database and topics of its own: its worker sends this suite's deliveries alone, and its subscribers get this
// suite's plants alone. The CLI speaks to the gateway only.
describe('the plant-store CLI', () => {
  let stack: OwnStack;
  let gw: e2e.RunningGateway;
  const receiver = new Receiver();

  /** Runs the CLI as a separate process (asynchronously: the gateway answering it lives in this one). */
  const cli = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [CLI, ...args],
        {
          env: {
            PATH: process.env.PATH,
            PLANT_STORE_URL: gw.url,
            PLANT_STORE_ADMIN_TOKEN: e2e.ADMIN_TOKEN,
            PLANT_STORE_WEBHOOK_TOKEN: e2e.WEBHOOK_TOKEN,
            ...env,
          },
        },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  const json = async (args: string[]) => {
    const r = await cli([...args, '--json']);
    expect(r).toMatchObject({ code: 0 });
    return JSON.parse(r.stdout);
  };

  beforeAll(async () => {
    await receiver.start();
    stack = await startOwnStack('cli');
    gw = stack.gateway;
  });

  afterAll(async () => {
    await stack?.close();
    await receiver.stop();
  });

  it('subscribes with a filter, sends a plant, and shows its delivery with every attempt', async () => {
    const human = await cli(['subscriptions', 'create', `${receiver.url}/cli-human`, '--tags', 'nowhere']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/secret\s+whsec_/);
    expect(human.stdout).toMatch(/not shown again/);
    expect(human.stdout).toMatch(/^id\s+\S+/m);

    const sub = await json([
      'subscriptions',
      'create',
      `${receiver.url}/cli`,
      '--tags',
      'indoor',
      '--description',
      'cli',
    ]);
    expect(sub).toMatchObject({ filter: { tags: ['indoor'] }, secret: expect.stringMatching(/^whsec_/) });
    expect((await cli(['subscriptions', 'list'])).stdout).toContain(sub.id);

    const sent = await json(['send', '--name', 'CLI fern', '--tag', 'indoor']);
    expect(sent).toMatchObject({ eventId: expect.any(String), plant: { name: 'CLI fern', tag: 'indoor' } });
    await waitFor('the delivery', () => receiver.on('/cli', sent.plant.id).length === 1);
    expect(receiver.on('/cli-human', sent.plant.id)).toHaveLength(0); // its filter let nothing through

    const page = await waitFor('the delivery listed as succeeded', async () => {
      const p = await json(['deliveries', 'list', '--subscription', sub.id, '--since', '1h']);
      return p.items[0]?.status === 'succeeded' ? p : null;
    });
    expect(page.items).toHaveLength(1);
    const table = await cli(['deliveries', 'list', '--subscription', sub.id]);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+SUBSCRIPTION\s+TYPE\s+PLANT\s+STATUS/);
    const shown = await cli(['deliveries', 'show', page.items[0].id]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^AT\s+STATUS\s+MS/m);
    expect(shown.stdout).toMatch(/\s204\s/);
    expect(shown.stdout).toMatch(/^webhook-signature: v1,/m); // what was sent, signature included

    // Replay: the failed ones only (none), then everything since an hour ago (the one that succeeded, sent again).
    expect((await cli(['deliveries', 'recover', '--subscription', sub.id, '--since', '1h'])).stdout).toMatch(
      /^0 failed deliveries re-queued/,
    );
    const replayed = await json(['deliveries', 'recover', '--all', '--subscription', sub.id, '--since', '1h']);
    expect(replayed).toMatchObject({ requeued: 1, status: 'all', complete: true, cursor: null });
    const again = await waitFor('the replay', () => receiver.on('/cli', sent.plant.id)[1], 30_000);
    expect(again.headers['webhook-id']).toBe(receiver.on('/cli', sent.plant.id)[0].headers['webhook-id']);

    const tested = await cli(['subscriptions', 'test', sub.id]);
    expect(tested.code).toBe(0);
    expect(tested.stdout).toMatch(/^webhook-id: msg_test_/m);
    expect(tested.stdout).toMatch(/HTTP 204 after \d+ ms/);
    receiver.behave('/cli', () => ({ status: 500 }));
    // A receiver that does not answer 2xx: exit 1, with the JSON for a script all the same.
    const failing = await cli(['subscriptions', 'test', sub.id, '--plant', '{"id": 5, "name": "Probe"}', '--json']);
    expect(failing.code).toBe(1);
    expect(JSON.parse(failing.stdout)).toMatchObject({ succeeded: false, response: { status: 500 } });
    expect(JSON.parse(JSON.parse(failing.stdout).request.body)).toEqual({ id: 5, name: 'Probe' });
    const failed = await cli(['subscriptions', 'test', sub.id]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/HTTP 500 after/);
    receiver.behave('/cli', () => ({ status: 204 }));

    const rotated = await json(['subscriptions', 'rotate', sub.id]);
    expect(rotated.secret).not.toBe(sub.secret);
    expect((await json(['subscriptions', 'disable', sub.id])).enabled).toBe(false);
    expect((await json(['subscriptions', 'disable', sub.id, '--enable'])).enabled).toBe(true);
    expect((await json(['dead-letters', 'list', '--limit', '5'])).items).toEqual(expect.any(Array));
  });

  // Issue 36 (a): what others wrote (a description set through a portal link, a receiver's reply) is shown, never
  // obeyed: no control character reaches the terminal, tables or JSON.
  it('prints what subscribers wrote with its control characters as escapes', async () => {
    const TITLE_AND_CLEAR = '\x1b]0;pwned\x07\x1b[2J';
    const api = (method: string, path: string, token: string, body?: unknown) =>
      fetch(`${gw.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: await r.json() }));
    const sub = await json(['subscriptions', 'create', `${receiver.url}/cli-controls`, '--tags', 'nowhere']);
    const link = await api('POST', `/subscriptions/${sub.id}/portal-links`, e2e.ADMIN_TOKEN, {});
    expect(link.status).toBe(201);
    const described = `mine${TITLE_AND_CLEAR}\nfake-row\x9b31m`;
    const set = await api('PATCH', `/subscriptions/${sub.id}`, link.body.token, { description: described });
    expect(set.status).toBe(200);
    const reply = `ok\x1b[1A\x1b[2K\r${TITLE_AND_CLEAR}done`;
    receiver.behave('/cli-controls', () => ({ status: 200, body: reply }));

    // A character a terminal obeys: C0 but line feed, DEL, and C1 (U+0080 to U+009F).
    // eslint-disable-next-line no-control-regex -- finding control characters is the test
    const obeyed = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;
    const listed = await cli(['subscriptions', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toMatch(obeyed);
    expect(listed.stdout).toMatch(new RegExp(`^${sub.id} .*mine\\\\x1b\\]0;pwned`, 'm'));
    expect(listed.stdout).not.toMatch(/^fake-row/m); // its line feed drew no row of its own
    const shown = await cli(['subscriptions', 'show', sub.id]);
    expect(shown.stdout).not.toMatch(obeyed);
    expect(shown.stdout).toMatch(/^description +mine\\x1b\]0;pwned\\x07\\x1b\[2J\\x0afake-row\\x9b31m$/m);
    const tested = await cli(['subscriptions', 'test', sub.id]);
    expect(tested.code).toBe(0);
    expect(tested.stdout).not.toMatch(obeyed);
    expect(tested.stdout).toContain('ok\\x1b[1A\\x1b[2K\\x0d\\x1b]0;pwned\\x07\\x1b[2Jdone');

    // JSON for scripts: nothing raw in the text either, and the same values to a parser.
    const listedJson = await cli(['subscriptions', 'list', '--json']);
    expect(listedJson.stdout).not.toMatch(obeyed);
    const mine = JSON.parse(listedJson.stdout).find((s: { id: string }) => s.id === sub.id);
    expect(mine.description).toBe(described);
    const testedJson = await cli(['subscriptions', 'test', sub.id, '--json']);
    expect(testedJson.stdout).not.toMatch(obeyed);
    expect(JSON.parse(testedJson.stdout).response.body).toBe(reply);
  });

  it('exits 1 with the reason when the API refuses, 2 on a wrong command line, 3 when nothing answers', async () => {
    const refused = await cli(['deliveries', 'retry', '00000000-0000-4000-8000-000000000000']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^plant-store: 404 .*No delivery/);
    const invalid = await cli(['subscriptions', 'create', 'ftp://example.test/x']);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/422[\s\S]*url:/);
    const usage = await cli(['deliveries', 'list', '--since', 'yesterday']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--since.*RFC 3339/);
    expect((await cli(['no-such-command'])).code).toBe(2);
    const allOfWhat = await cli(['deliveries', 'recover', '--all', '--since', '1h']);
    expect(allOfWhat.code).toBe(2);
    expect(allOfWhat.stderr).toMatch(/--all replays one subscription since a time: give --subscription/);
    const down = await cli(['subscriptions', 'list'], { PLANT_STORE_URL: 'http://127.0.0.1:1' });
    expect(down.code).toBe(3);
    expect(down.stderr).toMatch(/cannot reach Plant Store at http:\/\/127\.0\.0\.1:1/);
    const noToken = await cli(['subscriptions', 'list'], { PLANT_STORE_ADMIN_TOKEN: '' });
    expect(noToken.code).toBe(3);
    expect(noToken.stderr).toMatch(/set PLANT_STORE_ADMIN_TOKEN/);
    const webhookToken = await cli(['subscriptions', 'list'], { PLANT_STORE_ADMIN_TOKEN: e2e.WEBHOOK_TOKEN });
    expect(webhookToken.code).toBe(1);
    expect(webhookToken.stderr).toMatch(/401.*admin token/i);
  });

  describe('tokens kept out of the process list', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'plant-store-cli-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    /** A token file as an operator would write it: one line, mode 600. */
    const tokenFile = (name: string, token: string, mode = 0o600) => {
      const file = path.join(dir, name);
      writeFileSync(file, `${token}\n`);
      chmodSync(file, mode);
      return file;
    };
    const noTokens = { PLANT_STORE_ADMIN_TOKEN: '', PLANT_STORE_WEBHOOK_TOKEN: '' };

    it('reads the admin and webhook tokens from files, by option or by *_FILE variable, without a warning', async () => {
      const admin = tokenFile('admin', e2e.ADMIN_TOKEN);
      const byOption = await cli(['subscriptions', 'list', '--admin-token-file', admin, '--json'], noTokens);
      expect(byOption).toMatchObject({ code: 0, stderr: '' });
      const byVariable = await cli(['subscriptions', 'list', '--json'], {
        ...noTokens,
        PLANT_STORE_ADMIN_TOKEN_FILE: admin,
      });
      expect(byVariable).toMatchObject({ code: 0, stderr: '' });
      const webhook = tokenFile('webhook', e2e.WEBHOOK_TOKEN);
      const sent = await cli(['send', '--webhook-token-file', webhook, '--json'], noTokens);
      expect(sent).toMatchObject({ code: 0, stderr: '' });
    });

    it('still takes a token on the command line, warning that everyone can see it there', async () => {
      const flagged = await cli(['subscriptions', 'list', '--admin-token', e2e.ADMIN_TOKEN], noTokens);
      expect(flagged.code).toBe(0);
      expect(flagged.stderr).toMatch(/warning: --admin-token puts the token in the process list/);
      expect(flagged.stderr).toMatch(/PLANT_STORE_ADMIN_TOKEN or --admin-token-file/);
      expect(flagged.stderr).not.toContain(e2e.ADMIN_TOKEN);
    });

    it('offers a file for every option that takes a token', async () => {
      const helps = await Promise.all(
        [[], ['subscriptions', 'create'], ['send']].map((c) => cli([...c, '--help'], noTokens)),
      );
      const options = helps.flatMap((h) => [...h.stdout.matchAll(/--([\w-]*token[\w-]*)/g)].map((m) => m[1]));
      const valueOptions = options.filter((o) => !o.endsWith('-file'));
      expect(valueOptions.length).toBeGreaterThanOrEqual(3);
      expect(valueOptions.filter((o) => !options.includes(`${o}-file`))).toEqual([]);
    });

    it('warns about a token file other users can read, and names a file it cannot read', async () => {
      const open = tokenFile('open', e2e.ADMIN_TOKEN, 0o644);
      const loose = await cli(['subscriptions', 'list', '--admin-token-file', open], noTokens);
      expect(loose.code).toBe(0);
      expect(loose.stderr).toContain(`can be read by other users: chmod 600 ${open}`);
      const missing = await cli(['subscriptions', 'list', '--admin-token-file', path.join(dir, 'nope')], noTokens);
      expect(missing.code).toBe(3);
      expect(missing.stderr).toMatch(/cannot read the token file .*nope \(--admin-token-file\)/);
    });

    it('sends a subscriber token read from a file', async () => {
      const token = 'subscriber-token-from-a-file-0123';
      const sub = await json([
        'subscriptions',
        'create',
        `${receiver.url}/cli-token`,
        '--subscriber-token-file',
        tokenFile('subscriber', token),
      ]);
      const plantId = Math.floor(Math.random() * 1e9) + 1;
      const tested = await cli([
        'subscriptions',
        'test',
        sub.id,
        '--plant',
        JSON.stringify({ id: plantId, name: 'T' }),
      ]);
      expect(tested.code).toBe(0);
      const [request] = receiver.on('/cli-token', plantId);
      expect(request.headers.authorization).toBe(`Bearer ${token}`);
    });
  });

  it.each([
    '',
    'subscriptions',
    'subscriptions create',
    'subscriptions test',
    'deliveries list',
    'deliveries recover',
    'dead-letters redrive',
    'send',
  ])('prints help for "plant-store %s --help" and exits 0', async (command) => {
    const r = await cli([...command.split(' ').filter(Boolean), '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: plant-store/);
  });
});
