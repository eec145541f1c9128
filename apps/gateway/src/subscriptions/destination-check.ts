import {
  checkSubscriberUrl,
  credentialsInUrl,
  DeliveryDestination,
  DestinationSecrets,
  DestinationSettings,
  hasBasic,
  destinationKind,
  HostPort,
  parseBrokerUrl,
  sqsCredentialsProblem,
  withoutCredentials,
} from '@app/delivery';
import { ProblemException, invalidField } from '@app/observability';
import type { components } from '@app/contracts';

type DestinationBody = components['schemas']['SubscriptionDestination'];

/** What the check needs of the configuration: the SSRF rule, and our own topic (a loop when delivered to). */
export interface DestinationRules {
  allowPrivateNetworks: boolean;
  ownBrokers: string[];
  ownTopic: string;
}

/** A subscription's destination as stored: the URL without credentials; settings and secrets beside it. */
export interface CheckedDestination {
  url: string;
  destination: DeliveryDestination;
}

/**
 * A URL and its `destination` checked together, 422 naming the field and why: the scheme is one there is, a
 * broker URL is complete, each host passes the SSRF rule of HTTP receivers, settings fit the kind, a token only
 * for HTTP (a broker's user and password are in its URL), and no delivery into our own plant.created topic. An
 * HTTP receiver's authentication is checked by checkHttpDestination.
 */
export async function checkDestination(
  url: string,
  body: DestinationBody | undefined,
  hasToken: boolean,
  rules: DestinationRules,
): Promise<CheckedDestination> {
  const kind = destinationKind(url);
  if (!kind.ok) throw invalidField('url', kind.reason);
  if (kind.value === 'http') return checkHttpDestination(url, body, hasToken, rules);
  if (hasToken)
    throw invalidField(
      'token',
      "is sent to HTTP receivers as Authorization; a broker's user and password go in its URL",
    );
  const { tls: tlsBody, oauth2: oauthBody, ...rest } = body ?? {};
  const { key, ...tls } = tlsBody ?? {};
  const settings: DestinationSettings = { ...rest, ...(tlsBody ? { tls } : {}) };
  const secrets: DestinationSecrets = key ? { key } : {};
  if (oauthBody) {
    // Never kept among the settings (stored as they are): the client secret is sealed with the other secrets.
    const { clientSecret, ...oauth2 } = oauthBody;
    if (!clientSecret) throw invalidField('destination.oauth2.clientSecret', 'is required');
    settings.oauth2 = oauth2;
    secrets.clientSecret = clientSecret;
  }
  const parsed = parseBrokerUrl(url, settings, secrets);
  if (!parsed.ok) throw invalidField('url', parsed.reason);
  const target = parsed.value;
  if (settings.sasl && target.kind !== 'kafka') throw invalidField('destination.sasl', 'is for kafka:// only');
  if (settings.maxLen !== undefined && target.kind !== 'redis')
    throw invalidField('destination.maxLen', 'is for redis:// only');
  if (key && !tls.cert) throw invalidField('destination.tls.key', 'goes with a client certificate (tls.cert)');
  checkKafkaSasl(settings, target.secrets, target.tls);
  // SQS signs every request with the URL's key: without one the SDK would use the worker's own AWS identity.
  const unsigned = target.kind === 'sqs' ? sqsCredentialsProblem(target.secrets) : null;
  if (unsigned) throw invalidField('url', unsigned);
  if (target.kind === 'kafka' && target.path === rules.ownTopic && target.hosts.some((h) => isOwn(h, rules)))
    throw invalidField(
      'url',
      `is Plant Store's own ${rules.ownTopic} topic: a New Plant sent there would come back as a new plant (a loop)`,
    );
  for (const h of target.hosts) await assertHostAllowed(`http://${hostText(h)}/`, rules, h.host);
  if (settings.oauth2)
    await assertHostAllowed(settings.oauth2.tokenUrl, rules, undefined, 'destination.oauth2.tokenUrl');
  return { url: withoutCredentials(url), destination: { settings, secrets: target.secrets } };
}

/**
 * Kafka's SASL: a user and password from the URL (plain, SCRAM), or with `oauthbearer` a token of the `oauth2`
 * client, never both; a bearer token only over TLS (as KAFKA_SASL_MECHANISM=oauthbearer requires KAFKA_SSL).
 */
function checkKafkaSasl(settings: DestinationSettings, secrets: DestinationSecrets, tls: boolean) {
  const oauth = settings.sasl?.mechanism === 'oauthbearer';
  if (settings.oauth2 && !oauth)
    throw invalidField(
      'destination.oauth2',
      'is for https receivers, and for kafka:// with destination.sasl.mechanism oauthbearer',
    );
  if (!oauth) {
    if (settings.sasl && !secrets.username)
      throw invalidField('url', `needs a user and password for SASL (kafka://user:password@host:port/topic)`);
    return;
  }
  if (!settings.oauth2)
    throw invalidField(
      'destination.oauth2',
      'is required with sasl oauthbearer: the token endpoint, client and secret',
    );
  if (secrets.username !== undefined)
    throw invalidField('url', 'carries a user and password, and sasl oauthbearer sends a token: give one of them');
  if (!tls)
    throw invalidField('destination.tls', 'is required with sasl oauthbearer: a bearer token is never sent in clear');
}

/**
 * An HTTP receiver and how it is authenticated (docs/destinations.md): a user and password in its URL (sent as
 * Basic; stored sealed, the URL without them), `tls` (its CA, a client certificate: mTLS, https only), `oauth2`
 * client credentials (the secret sealed; the token endpoint under the receiver's SSRF rule). One Authorization at
 * most: a token beside Basic or OAuth 2, or both of those, is a 422.
 */
async function checkHttpDestination(
  url: string,
  body: DestinationBody | undefined,
  hasToken: boolean,
  rules: DestinationRules,
): Promise<CheckedDestination> {
  const { sasl, maxLen, tls: tlsBody, oauth2: oauthBody } = body ?? {};
  if (sasl) throw invalidField('destination.sasl', 'is for kafka:// only');
  if (maxLen !== undefined) throw invalidField('destination.maxLen', 'is for redis:// only');
  const bare = withoutCredentials(url);
  const basic = credentialsInUrl(url);
  const secrets: DestinationSecrets = hasBasic(basic) ? basic : {};
  const settings: DestinationSettings = {};
  if (oauthBody) {
    const { clientSecret, ...oauth2 } = oauthBody;
    if (hasBasic(secrets))
      throw invalidField('destination.oauth2', 'and the user and password in the URL would both be Authorization');
    if (!clientSecret) throw invalidField('destination.oauth2.clientSecret', 'is required');
    settings.oauth2 = oauth2;
    secrets.clientSecret = clientSecret;
  }
  if (hasToken && (settings.oauth2 || hasBasic(secrets))) {
    const other = settings.oauth2 ? "destination.oauth2's token is" : "the URL's user and password are (Basic)";
    throw invalidField('token', `is sent as Authorization, as ${other}: give one of them`);
  }
  if (tlsBody) {
    const { key, ...tls } = tlsBody;
    if (!/^https:/i.test(bare)) throw invalidField('destination.tls', 'is for https:// receivers');
    if (key && !tls.cert) throw invalidField('destination.tls.key', 'goes with a client certificate (tls.cert)');
    if (tls.cert && !key) throw invalidField('destination.tls.cert', 'goes with its private key (tls.key)');
    settings.tls = tls;
    if (key) secrets.key = key;
  }
  // The URL as it is stored, without user-info (checkSubscriberUrl refuses credentials in a URL it checks).
  await assertHostAllowed(bare, rules);
  // Our worker fetches tokens there: the same rule as the receiver's, so a token URL reaches no private address.
  if (settings.oauth2)
    await assertHostAllowed(settings.oauth2.tokenUrl, rules, undefined, 'destination.oauth2.tokenUrl');
  return { url: bare, destination: { settings, secrets } };
}

/** The SSRF rule of HTTP receivers (address-policy), for the host of an HTTP or broker URL. */
async function assertHostAllowed(url: string, rules: DestinationRules, host?: string, field = 'url') {
  const check = await checkSubscriberUrl(url, rules.allowPrivateNetworks);
  if (!check.ok) throw invalidField(field, host ? check.reason.replace(/^host \S+/, `host ${host}`) : check.reason);
}

const LOCAL = new Set(['localhost', '127.0.0.1', '::1']);
const sameHost = (a: string, b: string) => a.toLowerCase() === b.toLowerCase() || (LOCAL.has(a) && LOCAL.has(b));

function isOwn(h: HostPort, rules: DestinationRules): boolean {
  return rules.ownBrokers.some((b) => {
    const at = b.lastIndexOf(':');
    return sameHost(b.slice(0, at), h.host) && Number(b.slice(at + 1)) === h.port;
  });
}

const hostText = (h: HostPort) => `${h.host.includes(':') ? `[${h.host}]` : h.host}:${h.port}`;

/** A `destination` changes only with its URL: the URL's credentials and the settings are written together. */
export const destinationWithoutUrl = () =>
  ProblemException.of(
    'validation',
    'destination is written with the url it belongs to: give `url` (with its user and password) beside it',
    { errors: [{ field: 'destination', message: 'can only be changed together with url' }] },
  );
