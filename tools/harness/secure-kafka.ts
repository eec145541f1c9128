import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { formatStorage, spawnBroker } from '../local-stack/kafka';
import { stopProcess } from '../local-stack/processes';

// A secured Kafka 3.9 broker from the launcher's jars (.local/kafka/lib), started as the launcher starts its
// own (tools/local-stack/kafka.ts), for the security suite: one KRaft
// node with a SASL_SSL listener (SCRAM-SHA-512 and OAUTHBEARER validated against a JWKS the test serves), an
// SSL listener that requires client certificates (mTLS), the StandardAuthorizer, and a CA made on the spot.
// The recipe and its traps: /work/shared/notes/kafka-secure.md (the broker needs a truststore even alone).

export interface Pki {
  dir: string;
  /** The CA that signed the broker's and the clients' certificates (PEM). */
  ca: string;
  /** Another CA, which signed nothing the broker presents: a client trusting only it must refuse the broker. */
  otherCa: string;
  /** A client certificate and key (PEM files) for `name`, signed by the CA; the broker maps CN=name to User:name. */
  client(name: string): { cert: string; key: string };
  /** The same, signed by the other CA: the broker must refuse it. */
  strangerClient(name: string): { cert: string; key: string };
}

const openssl = (dir: string, ...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

function signed(dir: string, name: string, subject: string, ca: string, ext?: string) {
  openssl(
    dir,
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-subj',
    subject,
    '-out',
    `${name}.csr`,
  );
  const extArgs = ext ? ['-extfile', writeExt(dir, name, ext)] : [];
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.pem`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-days',
    '2',
    '-out',
    `${name}.pem`,
    ...extArgs,
  );
  return { cert: path.join(dir, `${name}.pem`), key: path.join(dir, `${name}.key`) };
}

function writeExt(dir: string, name: string, ext: string) {
  const file = path.join(dir, `${name}.ext`);
  fs.writeFileSync(file, `${ext}\n`);
  return file;
}

/** A CA, a broker certificate for 127.0.0.1/localhost in a PKCS#12 keystore, and client certificates on demand. */
export function makePki(): Pki {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plant-store-kafka-pki-'));
  for (const ca of ['ca', 'other-ca'])
    openssl(
      dir,
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=test ${ca}`,
      '-keyout',
      `${ca}.key`,
      '-out',
      `${ca}.pem`,
    );
  signed(dir, 'broker', '/CN=localhost', 'ca', 'subjectAltName=DNS:localhost,IP:127.0.0.1');
  openssl(
    dir,
    'pkcs12',
    '-export',
    '-in',
    'broker.pem',
    '-inkey',
    'broker.key',
    '-out',
    'broker.p12',
    '-passout',
    'pass:broker-store',
  );
  return {
    dir,
    ca: path.join(dir, 'ca.pem'),
    otherCa: path.join(dir, 'other-ca.pem'),
    client: (name) => signed(dir, `client-${name}`, `/CN=${name}`, 'ca'),
    strangerClient: (name) => signed(dir, `stranger-${name}`, `/CN=${name}`, 'other-ca'),
  };
}

export interface SecureKafkaOptions {
  /** Three ports are used from here: SASL_SSL, SSL with mTLS, and the controller's. */
  basePort: number;
  pki: Pki;
  /** SCRAM-SHA-512 users made when the storage is formatted; `admin` is the broker's own (a super user). */
  users: Record<string, string>;
  jwksUrl: string;
  audience: string;
}

export interface SecureKafka {
  /** `host:port` of the SASL_SSL listener (SCRAM-SHA-512 and OAUTHBEARER). */
  saslBroker: string;
  /** `host:port` of the SSL listener that requires a client certificate. */
  mtlsBroker: string;
  logFile: string;
  stop(): Promise<void>;
}

/**
 * A broker on three ports from `basePort`. A port can still be taken between choosing it and the broker binding it
 * (a leftover broker, or another process's listener), so a bind failure is tried again on another range, twice.
 */
export async function startSecureKafka(o: SecureKafkaOptions): Promise<SecureKafka> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await startOnce(attempt === 0 ? o : { ...o, basePort: securePortBase() });
    } catch (err) {
      if (attempt >= 2 || !/Address already in use/.test((err as Error).message)) throw err;
    }
  }
}

async function startOnce(o: SecureKafkaOptions): Promise<SecureKafka> {
  const [sasl, mtls, controller] = [o.basePort, o.basePort + 1, o.basePort + 2];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plant-store-kafka-secure-'));
  const jaasScram = `org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="${o.users.admin}";`;
  const props = `
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:${controller}
controller.listener.names=CONTROLLER
listeners=SASL_SSL://127.0.0.1:${sasl},MTLS://127.0.0.1:${mtls},CONTROLLER://127.0.0.1:${controller}
advertised.listeners=SASL_SSL://127.0.0.1:${sasl},MTLS://127.0.0.1:${mtls}
listener.security.protocol.map=SASL_SSL:SASL_SSL,MTLS:SSL,CONTROLLER:PLAINTEXT
inter.broker.listener.name=SASL_SSL
sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512
listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-512,OAUTHBEARER
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=${jaasScram}
listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;
listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerValidatorCallbackHandler
sasl.oauthbearer.jwks.endpoint.url=${o.jwksUrl}
sasl.oauthbearer.expected.audience=${o.audience}
listener.name.mtls.ssl.client.auth=required
ssl.principal.mapping.rules=RULE:^CN=([^,]+)$/$1/,DEFAULT
ssl.keystore.type=PKCS12
ssl.keystore.location=${path.join(o.pki.dir, 'broker.p12')}
ssl.keystore.password=broker-store
ssl.truststore.type=PEM
ssl.truststore.location=${o.pki.ca}
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
# The broker itself: its SCRAM user on the inter-broker listener, ANONYMOUS on the plaintext controller listener
# (loopback only). No application principal is a super user: every app runs on the documented ACLs alone.
super.users=User:admin;User:ANONYMOUS
allow.everyone.if.no.acl.found=false
log.dirs=${path.join(dir, 'data')}
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
num.network.threads=2
num.io.threads=2
num.recovery.threads.per.data.dir=1
`;
  const propsFile = path.join(dir, 'server.properties');
  fs.writeFileSync(propsFile, props);
  const scram = Object.entries(o.users).flatMap(([name, password]) => [
    '--add-scram',
    `SCRAM-SHA-512=[name=${name},password=${password}]`,
  ]);
  formatStorage(propsFile, scram);

  const logFile = path.join(dir, 'broker.log');
  const child = spawnBroker(propsFile, {
    heapMb: 384,
    logFile,
    // Kafka 3.9.1+ only fetches a JWKS from URLs on this list (CVE-2025-27817).
    jvmFlags: [`-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=${o.jwksUrl}`],
  });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => {
      const bind = /Address already in use/.test(fs.readFileSync(logFile, 'utf8')) ? ' (Address already in use)' : '';
      reject(new Error(`secured broker exited (${code})${bind}:\n${tail(logFile)}`));
    }),
  );
  const started = (async () => {
    const deadline = Date.now() + 90_000;
    while (!fs.readFileSync(logFile, 'utf8').includes('Kafka Server started')) {
      if (Date.now() > deadline) throw new Error(`secured broker did not start:\n${tail(logFile)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  await Promise.race([started, exited]).catch(async (err) => {
    child.kill('SIGKILL');
    throw err;
  });
  exited.catch(() => undefined);
  return {
    saslBroker: `127.0.0.1:${sasl}`,
    mtlsBroker: `127.0.0.1:${mtls}`,
    logFile,
    async stop() {
      if (child.exitCode !== null) return;
      await stopProcess(child, 10_000);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

const tail = (file: string) => fs.readFileSync(file, 'utf8').split('\n').slice(-30).join('\n');

/**
 * A port range of this suite's own (26000-26899), apart from freePort()'s (FREE_PORTS), varied per run so a
 * leftover broker cannot collide, and below Linux's ephemeral range (32768-60999), where an outgoing connection may
 * hold any port at any time. Each broker takes three ports from its base.
 */
export const SECURE_PORTS = { from: 26_000, count: 900 };
export const securePortBase = () => SECURE_PORTS.from + 3 * Math.floor((Math.random() * SECURE_PORTS.count) / 3);

export const randomPassword = () => randomBytes(12).toString('hex');
