import { createSign, generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  AclOperationTypes,
  AclPermissionTypes,
  AclResourceTypes,
  Admin,
  Kafka,
  KafkaMessage,
  logLevel,
  ResourcePatternTypes,
} from 'kafkajs';
import { Webhook } from 'standardwebhooks';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createGatewayApp } from '../../apps/gateway/src/gateway.app';
import { createWorkerApp } from '../../apps/worker/src/worker.app';
import { adminClient } from '../../tools/harness/admin';
import { Receiver } from '../../tools/harness/receiver';
import {
  makePki,
  Pki,
  randomPassword,
  SecureKafka,
  securePortBase,
  startSecureKafka,
} from '../../tools/harness/secure-kafka';
import * as e2e from '../../tools/harness/stack';
import { startAtTopicEnd } from '../../tools/harness/topic-end';
import { waitFor } from '../../tools/harness/wait';

// Kafka security against a real broker: SASL_SSL with SCRAM-SHA-512 and a CA made here, the KRaft
// StandardAuthorizer with only the README's ACLs, mTLS, OAUTHBEARER checked by the broker against a JWKS this
// suite serves. One broker for the suite; each case has its own topic prefix and group, so the ACLs of one
// case (all of the README's, or all but one) never help another.

const AUDIENCE = 'plant-store-kafka';
type App = 'gateway' | 'worker';
const user = (app: App) => `plant-store-${app}`;

interface AclRow {
  app: App;
  operation: keyof typeof AclOperationTypes;
  resource: 'TOPIC' | 'GROUP';
  name: string;
  onlyWithoutCreate: boolean;
  notWithoutCreate: boolean;
}

/** The README's ACL table, as an operator would read it: one row per name. */
function documentedAcls(): AclRow[] {
  const readme = readFileSync(path.resolve(__dirname, '../../README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Kafka ACLs') + 1);
  const end = section.indexOf('\n## ');
  const table = end < 0 ? section : section.slice(0, end);
  return table
    .split('\n')
    .filter((l) => /^\| (gateway|worker) \|/.test(l))
    .flatMap((line) => {
      const [app, operation, resource, names, why] = line
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim().replaceAll('`', ''));
      return names.split(', ').map((name) => ({
        app: app as App,
        operation: operation as AclRow['operation'],
        resource: resource as AclRow['resource'],
        name,
        onlyWithoutCreate: /only with KAFKA_CREATE_TOPICS=false/.test(why),
        notWithoutCreate: /not needed with KAFKA_CREATE_TOPICS=false/.test(why),
      }));
    });
}

interface Case {
  prefix: string;
  group: string;
}
let cases = 0;
const newCase = (): Case => {
  const tag = `${randomBytes(3).toString('hex')}${++cases}`;
  return { prefix: `sec-${tag}.`, group: `sec-${tag}` };
};

/** The README's names, for this case: its topic prefix, its WORKER_GROUP_ID. */
const nameIn = (row: AclRow, c: Case) =>
  row.resource === 'TOPIC' ? `${c.prefix}${row.name}` : row.name.replace(/^plant-store-worker/, c.group);
const describe_ = (row: AclRow, c: Case) => `${row.operation} on ${row.resource} ${nameIn(row, c)}`;

describe('Kafka security: SASL_SSL, SCRAM, mTLS, OAUTHBEARER, and the documented ACLs, no more', () => {
  let pki: Pki;
  let kafka: SecureKafka;
  let admin: Admin;
  let db: e2e.ScratchDatabase;
  let tokens: http.Server;
  let tokenUrl = '';
  let tokensIssued = 0;
  // A subscriber's own user on the same broker (its SCRAM credentials made when the storage is formatted).
  const subscriber = {
    user: `subscriber-${randomBytes(3).toString('hex')}`,
    topic: `dest-${randomBytes(3).toString('hex')}`,
  };
  const passwords = {
    admin: randomPassword(),
    [user('gateway')]: randomPassword(),
    [user('worker')]: randomPassword(),
    [subscriber.user]: randomPassword(),
  };
  const passwordFile = (name: string) => path.join(pki.dir, `${name}.password`);
  const acls = documentedAcls();
  const running: { close(): Promise<void> }[] = [];
  const receiver = new Receiver();

  beforeAll(async () => {
    // The identity provider: RS256 tokens for the client-credentials grant, and the JWKS the broker checks them with.
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'test-key', alg: 'RS256', use: 'sig' };
    tokens = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/jwks') return void res.end(JSON.stringify({ keys: [jwk] }));
      const [id, secret] = Buffer.from(String(req.headers.authorization).replace(/^Basic /, ''), 'base64')
        .toString()
        .split(':')
        .map(decodeURIComponent);
      if (secret !== `${id}-secret`) {
        res.statusCode = 401;
        return void res.end(JSON.stringify({ error: 'invalid_client' }));
      }
      tokensIssued++;
      const now = Math.floor(Date.now() / 1000);
      const token = jwt(privateKey, { sub: id, aud: AUDIENCE, iat: now, exp: now + 600, scope: 'kafka' });
      res.end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 600 }));
    });
    await new Promise<void>((r) => tokens.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(tokens.address() as AddressInfo).port}`;
    tokenUrl = `${base}/token`;

    pki = makePki();
    for (const [name, pw] of Object.entries(passwords)) writeFileSync(passwordFile(name), `${pw}\n`);
    [kafka, db] = await Promise.all([
      startSecureKafka({
        basePort: securePortBase(),
        pki,
        users: passwords,
        jwksUrl: `${base}/jwks`,
        audience: AUDIENCE,
      }),
      e2e.scratchDatabase('kafkasec'),
    ]);
    admin = new Kafka({
      brokers: [kafka.saslBroker],
      clientId: 'security-admin',
      ssl: { ca: [readFileSync(pki.ca, 'utf8')] },
      sasl: { mechanism: 'scram-sha-512', username: 'admin', password: passwords.admin },
      logLevel: logLevel.NOTHING,
    }).admin();
    await admin.connect();
    await receiver.start();
  }, 120_000);

  afterAll(async () => {
    for (const r of running.reverse()) await r.close().catch(() => undefined);
    await admin?.disconnect();
    await kafka?.stop();
    await db?.drop();
    await receiver.stop();
    tokens?.close();
  });

  /** The SCRAM user's settings; the password from a file, as a mounted Kubernetes Secret gives it. */
  const scramEnv = (app: App, c: Case, extra: Record<string, string> = {}) =>
    e2e.baseEnv({
      DATABASE_URL: db.url,
      KAFKA_BROKERS: kafka.saslBroker,
      KAFKA_SSL: 'true',
      KAFKA_SSL_CA_FILE: pki.ca,
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: user(app),
      KAFKA_SASL_PASSWORD_FILE: passwordFile(user(app)),
      KAFKA_TOPIC_PREFIX: c.prefix,
      WORKER_GROUP_ID: c.group,
      PLANT_CREATED_PARTITIONS: '2',
      ...extra,
    });

  async function grant(c: Case, rows: AclRow[]) {
    await admin.createAcls({
      acl: rows.map((row) => ({
        resourceType: AclResourceTypes[row.resource],
        resourceName: nameIn(row, c),
        resourcePatternType: ResourcePatternTypes.LITERAL,
        principal: `User:${user(row.app)}`,
        host: '*',
        operation: AclOperationTypes[row.operation],
        permissionType: AclPermissionTypes.ALLOW,
      })),
    });
  }
  const defaultRows = () => acls.filter((r) => !r.onlyWithoutCreate);

  async function startWorker(env: NodeJS.ProcessEnv) {
    const { app } = await createWorkerApp(env);
    running.push(app);
    await app.init();
    await app.startAllMicroservices();
    await app.listen(0, '127.0.0.1');
    return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
  }
  async function startGateway(env: NodeJS.ProcessEnv) {
    const { app } = (await createGatewayApp(env)) as { app: NestFastifyApplication };
    running.push(app);
    await app.listen(0, '127.0.0.1');
    return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
  }
  const produce = async (topic: string, key: string, value: string) => {
    const producer = superProducer();
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: [{ key, value }] });
    await producer.disconnect();
  };
  const superKafka = () =>
    new Kafka({
      brokers: [kafka.saslBroker],
      clientId: 'security-producer',
      ssl: { ca: [readFileSync(pki.ca, 'utf8')] },
      sasl: { mechanism: 'scram-sha-512', username: 'admin', password: passwords.admin },
      logLevel: logLevel.NOTHING,
    });
  const superProducer = () => superKafka().producer();

  const main = newCase();

  it('runs webhook → stored → delivered, a dead letter and the overview lag over SASL_SSL on the README ACLs alone', async () => {
    await grant(main, defaultRows());
    const worker = await startWorker(scramEnv('worker', main));
    const gw = await startGateway(scramEnv('gateway', main));
    const api = adminClient(gw.url);
    await api.subscribe({ url: `${receiver.url}/secure` });
    const id = e2e.plantIds()();
    expect((await e2e.postPlant(gw.url, { id, name: 'Monstera', tag: 'tls' })).status).toBe(200);
    await waitFor('the delivery over SASL_SSL', () => receiver.on('/secure', id)[0]);

    await produce(`${main.prefix}plant.created`, `poison-${id}`, 'not a CloudEvent');
    await waitFor('the dead letter in the admin API', async () => {
      const res = await api.call('GET', '/dead-letters?limit=100');
      return (res.body.items as { key: string }[]).some((d) => d.key === `poison-${id}`);
    });
    const overview = await api.call('GET', '/overview');
    expect(overview.body.events.consumerLag).toEqual(expect.any(Number));
    const ready = await fetch(`${worker.url}/readyz`);
    expect(ready.status).toBe(200);
  });

  it('fails the gateway’s readiness, naming the ACL, when its WRITE is revoked at run time, until it is granted again', async () => {
    const c = newCase();
    await grant(c, defaultRows());
    await startWorker(scramEnv('worker', c));
    const gw = await startGateway(scramEnv('gateway', c));
    const post = () => e2e.postPlant(gw.url, { id: e2e.plantIds()(), name: 'Pilea', tag: 'acl' });
    expect((await post()).status).toBe(200);

    const write = acls.find((r) => r.app === 'gateway' && r.operation === 'WRITE' && r.resource === 'TOPIC')!;
    const filter = {
      resourceType: AclResourceTypes.TOPIC,
      resourceName: nameIn(write, c),
      resourcePatternType: ResourcePatternTypes.LITERAL,
      principal: `User:${user('gateway')}`,
      host: '*',
      operation: AclOperationTypes.WRITE,
      permissionType: AclPermissionTypes.ALLOW,
    };
    await admin.deleteAcls({ filters: [filter] });
    const expected = describe_(write, c);
    const detail = await waitFor(`/readyz to name ${expected}`, async () => {
      expect((await post()).status).toBe(503); // never a 200 for a record Kafka refused
      const res = await fetch(`${gw.url}/readyz`);
      const body = (await res.json()) as { detail?: string };
      return res.status === 503 && body.detail?.includes(expected) ? body.detail : null;
    });
    expect(detail).toContain('docs/kafka-security.md');

    await admin.createAcls({ acl: [filter] });
    await waitFor('a 200 once WRITE is granted again', async () => (await post()).status === 200);
    expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
  });

  it('carries the OAUTHBEARER token from the test identity provider, fetched once for all of a gateway’s clients', async () => {
    const issuedBefore = tokensIssued;
    const gw = await startGateway(
      scramEnv('gateway', main, {
        KAFKA_SASL_MECHANISM: 'oauthbearer',
        KAFKA_SASL_USERNAME: '',
        KAFKA_SASL_PASSWORD_FILE: '',
        KAFKA_SASL_OAUTHBEARER_TOKEN_URL: tokenUrl,
        KAFKA_SASL_OAUTHBEARER_CLIENT_ID: user('gateway'),
        KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET: `${user('gateway')}-secret`,
        KAFKA_SASL_OAUTHBEARER_SCOPE: 'kafka',
      }),
    );
    const id = e2e.plantIds()();
    expect((await e2e.postPlant(gw.url, { id, name: 'Calathea', tag: 'oauth' })).status).toBe(200);
    await waitFor('the delivery of the OAUTHBEARER gateway', () => receiver.on('/secure', id)[0]);
    expect(tokensIssued - issuedBefore).toBe(1);
  });

  it('says which OAuth client setting is wrong when the token endpoint refuses it', async () => {
    const failure = createGatewayApp(
      scramEnv('gateway', main, {
        KAFKA_SASL_MECHANISM: 'oauthbearer',
        KAFKA_SASL_USERNAME: '',
        KAFKA_SASL_PASSWORD_FILE: '',
        KAFKA_SASL_OAUTHBEARER_TOKEN_URL: tokenUrl,
        KAFKA_SASL_OAUTHBEARER_CLIENT_ID: 'someone-else',
        KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET: 'not-the-secret',
      }),
    );
    await expect(failure).rejects.toThrow(
      /refused the client credentials \(HTTP 401 invalid_client\).*KAFKA_SASL_OAUTHBEARER_CLIENT_ID/,
    );
    await expect(failure).rejects.not.toThrow(/not-the-secret/);
  });

  it('connects by mTLS with a client certificate, whose CN is the principal of the same ACLs', async () => {
    const gatewayCert = pki.client(user('gateway'));
    const mtls = (extra: Record<string, string>) =>
      scramEnv('gateway', main, {
        KAFKA_BROKERS: kafka.mtlsBroker,
        KAFKA_SASL_MECHANISM: '',
        KAFKA_SASL_USERNAME: '',
        KAFKA_SASL_PASSWORD_FILE: '',
        ...extra,
      });
    const gw = await startGateway(mtls({ KAFKA_SSL_CERT_FILE: gatewayCert.cert, KAFKA_SSL_KEY_FILE: gatewayCert.key }));
    const id = e2e.plantIds()();
    expect((await e2e.postPlant(gw.url, { id, name: 'Ficus', tag: 'mtls' })).status).toBe(200);
    await waitFor('the delivery of the mTLS gateway', () => receiver.on('/secure', id)[0]);

    await expect(createGatewayApp(mtls({}))).rejects.toThrow(
      /requires a client certificate \(mTLS\): set KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE/,
    );
    const stranger = pki.strangerClient(user('gateway'));
    await expect(
      createGatewayApp(mtls({ KAFKA_SSL_CERT_FILE: stranger.cert, KAFKA_SSL_KEY_FILE: stranger.key })),
    ).rejects.toThrow(/refused the client certificate in KAFKA_SSL_CERT_FILE/);
  });

  it('stops start-up on a wrong password or an untrusted CA, naming the variable and never the secret', async () => {
    const wrong = 'wrong-password-1234';
    writeFileSync(passwordFile('wrong'), wrong);
    const refused = createWorkerApp(scramEnv('worker', main, { KAFKA_SASL_PASSWORD_FILE: passwordFile('wrong') }));
    await expect(refused).rejects.toThrow(
      /refused the SASL SCRAM-SHA-512 login of User:plant-store-worker \(KAFKA_SASL_USERNAME\): check KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD/,
    );
    const message = await refused.catch((e: Error) => e.message);
    expect(message).not.toContain(wrong);
    expect(message).not.toContain(passwords[user('worker')]);

    await expect(createWorkerApp(scramEnv('worker', main, { KAFKA_SSL_CA_FILE: pki.otherCa }))).rejects.toThrow(
      /not signed by the CA in KAFKA_SSL_CA_FILE .*: set KAFKA_SSL_CA_FILE to the CA that signed the broker's certificate/,
    );
    await expect(createGatewayApp(scramEnv('gateway', main, { KAFKA_SSL_CA_FILE: '' }))).rejects.toThrow(
      /not trusted by the system's CAs .*: set KAFKA_SSL_CA_FILE/,
    );
    await expect(
      createWorkerApp(scramEnv('worker', main, { KAFKA_SSL: 'false', KAFKA_SSL_CA_FILE: '' })),
    ).rejects.toThrow(/a listener that expects TLS or SASL closes plaintext connections/);
  });

  // Each documented ACL, taken away alone: the app that needs it fails at start-up or turns unready, naming it.
  it.each(documentedAclsForRemoval())('without %s, the failure names it', async (_label, index) => {
    const rows = defaultRows();
    const removed = rows[index];
    const c = newCase();
    await grant(
      c,
      rows.filter((_, i) => i !== index),
    );
    const expected = describe_(removed, c);
    if (removed.app === 'gateway') {
      await startWorker(scramEnv('worker', c));
      await expect(createGatewayApp(scramEnv('gateway', c))).rejects.toThrow(expected);
      return;
    }
    const atRunTime = removed.name.endsWith('.dlq') && removed.operation !== 'CREATE';
    if (!atRunTime) {
      await expect(createWorkerApp(scramEnv('worker', c))).rejects.toThrow(expected);
      return;
    }
    // Only exercised by a dead letter: the worker starts, then its readiness fails, naming the ACL.
    const worker = await startWorker(scramEnv('worker', c));
    await produce(`${c.prefix}plant.created`, 'poison', 'not a CloudEvent');
    const detail = await waitFor(`/readyz to name ${expected}`, async () => {
      const res = await fetch(`${worker.url}/readyz`);
      const body = (await res.json()) as { detail?: string };
      return res.status === 503 && body.detail?.includes(expected) ? body.detail : null;
    });
    expect(detail).toContain('docs/kafka-security.md');
  });

  function documentedAclsForRemoval(): [string, number][] {
    const c = { prefix: '', group: 'plant-store-worker' };
    return documentedAcls()
      .filter((r) => !r.onlyWithoutCreate)
      .map((r, i) => [`${r.app}'s ${describe_(r, c)}`, i]);
  }

  it('with KAFKA_CREATE_TOPICS=false, checks the platform team’s topics and says exactly what is missing or different', async () => {
    const c = newCase();
    await grant(
      c,
      acls.filter((r) => !r.notWithoutCreate),
    );
    const env = scramEnv('worker', c, { KAFKA_CREATE_TOPICS: 'false' });
    await expect(createWorkerApp(env)).rejects.toThrow(
      `Kafka topics missing with KAFKA_CREATE_TOPICS=false: ${c.prefix}plant.created (2 partitions`,
    );
    await admin.createTopics({
      topics: [
        { topic: `${c.prefix}plant.created`, numPartitions: 3 },
        { topic: `${c.prefix}plant.created.dlq`, numPartitions: 1 },
      ],
    });
    await expect(createWorkerApp(env)).rejects.toThrow(
      `topic ${c.prefix}plant.created has 3 partitions, PLANT_CREATED_PARTITIONS expects 2`,
    );
    await startWorker({ ...env, PLANT_CREATED_PARTITIONS: '3' });
  });

  it('delivers into a subscriber’s SASL_SSL Kafka by SCRAM or an OAuth token; a wrong secret or no CA is a recorded error', async () => {
    // Our side: a gateway and worker on the test stack's plaintext Kafka, with a database of their own.
    const own = await e2e.scratchDatabase('kafkadest');
    running.push({ close: () => own.drop() });
    const env = e2e.baseEnv({
      DATABASE_URL: own.url,
      DELIVERY_POLL_MS: '200',
      DELIVERY_RETRY_SCHEDULE: '0s,1s,1s,1s,1s,1s',
    });
    await startAtTopicEnd(env.WORKER_GROUP_ID!);
    running.push(await e2e.startWorker(env));
    const gw = await e2e.startGateway(env);
    running.push(gw);
    const api = adminClient(gw.url);

    // The subscriber's side: its topic, WRITE and DESCRIBE on it for its user alone, and a reader allowed to read.
    const { user: who, topic } = subscriber;
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await admin.createAcls({
      acl: (['WRITE', 'DESCRIBE'] as const).map((operation) => ({
        resourceType: AclResourceTypes.TOPIC,
        resourceName: topic,
        resourcePatternType: ResourcePatternTypes.LITERAL,
        principal: `User:${who}`,
        host: '*',
        operation: AclOperationTypes[operation],
        permissionType: AclPermissionTypes.ALLOW,
      })),
    });
    const got: KafkaMessage[] = [];
    const reader = superKafka().consumer({ groupId: `${topic}-reader` });
    running.push({ close: () => reader.disconnect() });
    const joined = new Promise((resolve) => reader.on(reader.events.GROUP_JOIN, resolve));
    await reader.connect();
    await reader.subscribe({ topic, fromBeginning: true });
    await reader.run({ eachMessage: async ({ message }) => void got.push(message) });
    await joined;

    const ca = readFileSync(pki.ca, 'utf8');
    const sasl = { mechanism: 'scram-sha-512' };
    const subscribe = async (password: string, destination: object) => {
      const url = `kafka://${who}:${password}@${kafka.saslBroker}/${topic}`;
      const res = await api.call('POST', '/subscriptions', { url, destination });
      expect(res.status).toBe(201);
      return res.body as { id: string; secret: string };
    };
    const wrongPassword = 'wrong-password-5678';
    const good = await subscribe(passwords[who], { tls: { ca }, sasl });
    const wrong = await subscribe(wrongPassword, { tls: { ca }, sasl });
    const noCa = await subscribe(passwords[who], { tls: {}, sasl });
    // The same user by SASL OAUTHBEARER: a token of the test identity provider (sub = the user), no password.
    const oauthbearer = (clientSecret: string) => ({
      tls: { ca },
      sasl: { mechanism: 'oauthbearer' },
      oauth2: { tokenUrl, clientId: who, clientSecret, scope: 'kafka' },
    });
    const subscribeOAuth = async (clientSecret: string) => {
      const res = await api.call('POST', '/subscriptions', {
        url: `kafka://${kafka.saslBroker}/${topic}`,
        destination: oauthbearer(clientSecret),
      });
      expect(res.status).toBe(201);
      return res.body as { id: string; secret: string };
    };
    const byToken = await subscribeOAuth(`${who}-secret`);
    const wrongClient = await subscribeOAuth('wrong-client-secret-5678');
    const plantId = e2e.plantIds()();
    const plant = { id: plantId, name: 'Alocasia', tag: 'sasl' };
    expect((await e2e.postPlant(gw.url, plant)).status).toBe(200);

    /** The record signed for `sub` (each subscription signs with its own secret). */
    const recordOf = (sub: { secret: string }) =>
      got.find((m) => {
        const h = Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k, String(v)]));
        try {
          return new Webhook(sub.secret).verify(m.value!.toString(), h) !== undefined;
        } catch {
          return false;
        }
      });
    const m = await waitFor('the record in the secured topic', () => recordOf(good), 30_000);
    expect(m.key?.toString()).toBe(String(plantId));
    const headers = Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k, String(v)]));
    expect(new Webhook(good.secret).verify(m.value!.toString(), headers)).toEqual(plant);
    const viaToken = await waitFor('the record sent with an OAuth token', () => recordOf(byToken), 30_000);
    expect(viaToken.key?.toString()).toBe(String(plantId));
    /** The delivery of the plant to `sub`, once `done` holds for its detail. */
    const detail = (sub: { id: string }, done: (d: { status: string; attemptLog: unknown[] }) => boolean) =>
      waitFor(
        `the delivery to ${sub.id}`,
        async () => {
          const [d] = (await api.deliveriesOf(sub.id)).filter((x) => x.plantId === plantId);
          const body = d && (await api.call('GET', `/deliveries/${d.id}`)).body;
          return body && done(body) ? body : null;
        },
        30_000,
      );
    const delivered = await detail(good, (d) => d.status === 'succeeded');
    expect(delivered.request.headers['webhook-id']).toBe(headers['webhook-id']);
    expect(delivered.attemptLog.at(-1).responseBody).toMatch(new RegExp(`^kafka acked: topic ${topic} partition 0 `));
    const shown = (await api.call('GET', `/subscriptions/${good.id}`)).body;
    expect(shown.url).toBe(`kafka://${kafka.saslBroker}/${topic}`);
    expect(shown.destination).toMatchObject({ kind: 'kafka', hasCredentials: true, settings: { tls: { ca }, sasl } });
    expect(JSON.stringify(shown)).not.toContain(passwords[who]);

    const refused = await detail(wrong, (d) => d.attemptLog.length > 0);
    expect(refused.attemptLog[0].error).toMatch(
      /^kafka: the broker refused the user name or password \(SASL SCRAM SHA512 authentication failed/,
    );
    expect(JSON.stringify(refused)).not.toContain(wrongPassword);
    expect(JSON.stringify(refused)).not.toContain(passwords[who]);
    const untrusted = await detail(noCa, (d) => d.attemptLog.length > 0);
    expect(untrusted.attemptLog[0].error).toMatch(
      /^kafka: could not reach broker [\d.:]+: unable to verify the first certificate.* \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\)/,
    );
    const noToken = await detail(wrongClient, (d) => d.attemptLog.length > 0);
    expect(noToken.attemptLog[0].error).toMatch(/^kafka: oauth2: the token endpoint answered 401 \(invalid_client\)/);
    const shownOAuth = JSON.stringify((await api.call('GET', `/subscriptions/${byToken.id}`)).body);
    expect(shownOAuth).toContain(tokenUrl);
    expect(shownOAuth).not.toContain(`${who}-secret`);
    expect(JSON.stringify(noToken)).not.toContain('wrong-client-secret-5678');
    expect(got).toHaveLength(2);
  });
});

function jwt(key: import('node:crypto').KeyObject, claims: Record<string, unknown>): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const head = `${part({ alg: 'RS256', typ: 'JWT', kid: 'test-key' })}.${part(claims)}`;
  return `${head}.${createSign('RSA-SHA256').update(head).sign(key).toString('base64url')}`;
}
