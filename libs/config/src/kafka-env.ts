import { readFileSync } from 'node:fs';
import { z } from 'zod';

// Kafka's connection, security and topic settings, shared by both apps, the set-up job and the tools'
// clients (libs/kafka's kafkaClientConfig builds the kafkajs options from them). Names follow what operators
// of a managed Kafka expect: TLS on or off, a CA, a client certificate, a SASL mechanism with its user, and
// each secret also from a file (`<NAME>_FILE`, a mounted Kubernetes Secret). See docs/kafka-security.md.

const csv = z.string().transform((s) =>
  s
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean),
);
const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const positiveInt = z.coerce.number().int().positive();

/** A file read at start-up: the variable holds its path, the config its contents (never the path's owner's guess). */
const fileContents = (check?: { pattern: RegExp; what: string }) =>
  z.string().transform((path, ctx) => {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? err})` });
      return z.NEVER;
    }
    if (check && !check.pattern.test(text)) {
      ctx.addIssue({ code: 'custom', message: `${path} does not hold ${check.what}` });
      return z.NEVER;
    }
    return text;
  });
/** A secret from a file: surrounding whitespace (the newline `echo` and editors add) is not part of it. */
const secretFile = fileContents().transform((s) => s.trim());

const PEM_CERT = { pattern: /-----BEGIN CERTIFICATE-----/, what: 'a PEM certificate (-----BEGIN CERTIFICATE-----)' };
const PEM_KEY = {
  pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  what: 'a PEM private key (-----BEGIN … PRIVATE KEY-----)',
};

export const SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512', 'oauthbearer'] as const;
export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

/** Topic names: with a prefix (a platform team's namespace), or each one by name. */
const topicName = z.string().regex(/^[A-Za-z0-9._-]{1,249}$/, 'letters, digits, ".", "_" and "-" (Kafka topic name)');

export const kafkaEnv = {
  KAFKA_BROKERS: csv.default(['127.0.0.1:9092']).pipe(z.array(z.string().regex(/^[^:\s]+:\d+$/, 'host:port')).min(1)),
  KAFKA_SSL: bool.default(false),
  KAFKA_SSL_CA_FILE: fileContents(PEM_CERT).optional(),
  KAFKA_SSL_CERT_FILE: fileContents(PEM_CERT).optional(),
  KAFKA_SSL_KEY_FILE: fileContents(PEM_KEY).optional(),
  KAFKA_SSL_KEY_PASSWORD: z.string().min(1).optional(),
  KAFKA_SSL_KEY_PASSWORD_FILE: secretFile.optional(),
  KAFKA_SASL_MECHANISM: z.enum(SASL_MECHANISMS).optional(),
  KAFKA_SASL_ALLOW_PLAINTEXT: bool.default(false),
  KAFKA_SASL_USERNAME: z.string().min(1).optional(),
  KAFKA_SASL_USERNAME_FILE: secretFile.optional(),
  KAFKA_SASL_PASSWORD: z.string().min(1).optional(),
  KAFKA_SASL_PASSWORD_FILE: secretFile.optional(),
  KAFKA_SASL_OAUTHBEARER_TOKEN_URL: z.string().url().optional(),
  KAFKA_SASL_OAUTHBEARER_CLIENT_ID: z.string().min(1).optional(),
  KAFKA_SASL_OAUTHBEARER_CLIENT_ID_FILE: secretFile.optional(),
  KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET: z.string().min(1).optional(),
  KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET_FILE: secretFile.optional(),
  KAFKA_SASL_OAUTHBEARER_SCOPE: z.string().min(1).optional(),
  // SASL extensions some providers need (Confluent Cloud: logicalCluster=lkc-…,identityPoolId=pool-…).
  KAFKA_SASL_OAUTHBEARER_EXTENSIONS: csv
    .pipe(z.array(z.string().regex(/^[A-Za-z]+=[^,]+$/, 'key=value pairs, comma-separated')))
    .transform((pairs) =>
      Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)])),
    )
    .optional(),
  // Topics: the worker creates them unless a platform team does (then it only checks them).
  KAFKA_CREATE_TOPICS: bool.default(true),
  KAFKA_TOPIC_PREFIX: z.union([z.literal(''), topicName]).default(''),
  KAFKA_TOPIC_PLANT_CREATED: topicName.optional(),
  KAFKA_TOPIC_PLANT_CREATED_DLQ: topicName.optional(),
  PLANT_CREATED_PARTITIONS: positiveInt.default(6),
  KAFKA_REPLICATION_FACTOR: positiveInt.default(1),
  KAFKA_MIN_INSYNC_REPLICAS: positiveInt.default(1),
};

const kafkaEnvObject = z.object(kafkaEnv);
/** What libs/kafka needs of the configuration: both apps' configs have it. */
export type KafkaEnv = z.infer<typeof kafkaEnvObject>;

const both = (c: Partial<KafkaEnv>, name: keyof KafkaEnv & string) => {
  const file = `${name}_FILE` as keyof KafkaEnv;
  return c[name] !== undefined && c[file] !== undefined ? [`set ${name} or ${name}_FILE, not both`] : [];
};

/**
 * Settings that only make sense together, checked once with the rest of the configuration: a half-configured
 * TLS or SASL set-up stops start-up here, naming the variable, instead of failing later as a connection error.
 */
export function checkKafkaEnv(c: KafkaEnv, ctx: z.core.$RefinementCtx<unknown>) {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  for (const name of ['KAFKA_SSL_CA_FILE', 'KAFKA_SSL_CERT_FILE', 'KAFKA_SSL_KEY_FILE'] as const)
    if (c[name] !== undefined && !c.KAFKA_SSL) issue(name, 'is set but KAFKA_SSL is not true: set KAFKA_SSL=true');
  if ((c.KAFKA_SSL_CERT_FILE === undefined) !== (c.KAFKA_SSL_KEY_FILE === undefined))
    issue(
      c.KAFKA_SSL_CERT_FILE === undefined ? 'KAFKA_SSL_CERT_FILE' : 'KAFKA_SSL_KEY_FILE',
      'a client certificate needs both KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE',
    );
  const names = [
    'KAFKA_SSL_KEY_PASSWORD',
    'KAFKA_SASL_USERNAME',
    'KAFKA_SASL_PASSWORD',
    'KAFKA_SASL_OAUTHBEARER_CLIENT_ID',
    'KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET',
  ] as const;
  for (const name of names) for (const m of both(c, name)) issue(name, m);
  const has = (name: (typeof names)[number]) =>
    c[name] !== undefined || c[`${name}_FILE` as keyof KafkaEnv] !== undefined;
  const mechanism = c.KAFKA_SASL_MECHANISM;
  if (mechanism && mechanism !== 'oauthbearer') {
    for (const name of ['KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD'] as const)
      if (!has(name)) issue(name, `is required with KAFKA_SASL_MECHANISM=${mechanism} (or ${name}_FILE)`);
  }
  if (mechanism === 'oauthbearer') {
    if (!c.KAFKA_SASL_OAUTHBEARER_TOKEN_URL)
      issue('KAFKA_SASL_OAUTHBEARER_TOKEN_URL', 'is required with KAFKA_SASL_MECHANISM=oauthbearer');
    for (const name of ['KAFKA_SASL_OAUTHBEARER_CLIENT_ID', 'KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET'] as const)
      if (!has(name)) issue(name, `is required with KAFKA_SASL_MECHANISM=oauthbearer (or ${name}_FILE)`);
  }
  if (!mechanism) {
    const stray = [
      ...names.slice(1).filter(has),
      ...(c.KAFKA_SASL_OAUTHBEARER_TOKEN_URL ? ['KAFKA_SASL_OAUTHBEARER_TOKEN_URL'] : []),
    ];
    for (const name of stray) issue(name, 'is set but KAFKA_SASL_MECHANISM is not: set the mechanism too');
  }
  // PLAIN sends the password and OAUTHBEARER the token as they are: without TLS anyone on the path reads them.
  // SCRAM never sends the password, so it is left alone.
  if ((mechanism === 'plain' || mechanism === 'oauthbearer') && !c.KAFKA_SSL && !c.KAFKA_SASL_ALLOW_PLAINTEXT)
    issue(
      'KAFKA_SASL_MECHANISM',
      `${mechanism} without KAFKA_SSL=true would send the ${mechanism === 'plain' ? 'password' : 'token'} in clear: ` +
        'set KAFKA_SSL=true (every managed Kafka offers TLS), or KAFKA_SASL_ALLOW_PLAINTEXT=true on a private test network',
    );
  if (c.KAFKA_REPLICATION_FACTOR < c.KAFKA_MIN_INSYNC_REPLICAS)
    issue('KAFKA_MIN_INSYNC_REPLICAS', 'cannot exceed KAFKA_REPLICATION_FACTOR (no write could ever succeed)');
}

/** The Kafka settings alone, for tools and tests that only talk to Kafka (the same names and checks). */
export const kafkaEnvSchema = kafkaEnvObject.superRefine(checkKafkaEnv);
