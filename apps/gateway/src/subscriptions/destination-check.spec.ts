import { ProblemException } from '@app/observability';
import { checkDestination, DestinationRules } from './destination-check';

// An HTTP receiver's authentication as the gateway takes it: Basic from the URL's user-info, mTLS, OAuth 2 client
// credentials; secrets apart from what is shown, one Authorization at most, the token endpoint under the SSRF rule.
// Hosts are IP literals or names with private networks allowed: nothing here asks DNS.
const open: DestinationRules = { allowPrivateNetworks: true, ownBrokers: [], ownTopic: 'plant.created' };
const guarded: DestinationRules = { ...open, allowPrivateNetworks: false };
const PUBLIC = 'https://93.184.215.14/hook';
const oauth2 = { tokenUrl: 'https://auth.example/oauth/token', clientId: 'plants', clientSecret: 'client-s3cret' };
const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';

/** The field a 422 names and why. */
async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof ProblemException)) throw new Error(`expected a 422, got ${String(err)}`);
  expect(err.problem.status).toBe(422);
  const [e] = (err.problem as unknown as { errors: { field: string; message: string }[] }).errors;
  return `${e.field} ${e.message}`;
}

describe('checkDestination for HTTP receivers', () => {
  it('takes a plain URL as it is, with no settings nor secrets', async () => {
    expect(await checkDestination('https://receiver.example/hook', undefined, true, open)).toEqual({
      url: 'https://receiver.example/hook',
      destination: { settings: {}, secrets: {} },
    });
  });

  it("keeps the URL's user and password as Basic secrets, the URL stored without them", async () => {
    const checked = await checkDestination('https://ann:p%40ss@receiver.example/hook?x=1', undefined, false, open);
    expect(checked).toEqual({
      url: 'https://receiver.example/hook?x=1',
      destination: { settings: {}, secrets: { username: 'ann', password: 'p@ss' } },
    });
  });

  it('moves the OAuth 2 client secret into the secrets; the rest is shown', async () => {
    const checked = await checkDestination(PUBLIC, { oauth2: { ...oauth2, scope: 'plants:write' } }, false, open);
    expect(checked.destination).toEqual({
      settings: { oauth2: { tokenUrl: oauth2.tokenUrl, clientId: 'plants', scope: 'plants:write' } },
      secrets: { clientSecret: 'client-s3cret' },
    });
  });

  it('takes a CA and client certificate for https (mTLS), the key sealed', async () => {
    const tls = { ca: PEM, cert: PEM, key: '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----' };
    const checked = await checkDestination(PUBLIC, { tls }, false, guarded);
    expect(checked.destination).toEqual({ settings: { tls: { ca: PEM, cert: PEM } }, secrets: { key: tls.key } });
  });

  it('refuses more than one Authorization', async () => {
    expect(await refusal(checkDestination('https://a:b@receiver.example/', undefined, true, open))).toMatch(
      /^token is sent as Authorization, as the URL's user and password are \(Basic\)/,
    );
    expect(await refusal(checkDestination(PUBLIC, { oauth2 }, true, open))).toMatch(/^token is sent as Authorization/);
    expect(await refusal(checkDestination('https://a:b@receiver.example/', { oauth2 }, false, open))).toMatch(
      /^destination\.oauth2 and the user and password/,
    );
  });

  it('refuses what does not fit an HTTP receiver, naming the field', async () => {
    const cases: [string, object, RegExp][] = [
      ['http://receiver.example/', { tls: { ca: PEM } }, /^destination\.tls is for https/],
      [PUBLIC, { tls: { cert: PEM } }, /^destination\.tls\.cert goes with its private key/],
      [PUBLIC, { tls: { key: PEM } }, /^destination\.tls\.key goes with a client certificate/],
      [PUBLIC, { sasl: { mechanism: 'plain' } }, /^destination\.sasl is for kafka/],
      [PUBLIC, { maxLen: 10 }, /^destination\.maxLen is for redis/],
      [PUBLIC, { oauth2: { ...oauth2, clientSecret: undefined } }, /^destination\.oauth2\.clientSecret is required/],
    ];
    for (const [url, body, why] of cases) expect(await refusal(checkDestination(url, body, false, open))).toMatch(why);
  });

  it('holds the token endpoint to the SSRF rule of receivers', async () => {
    const at = (tokenUrl: string, rules = guarded) =>
      checkDestination(PUBLIC, { oauth2: { ...oauth2, tokenUrl } }, false, rules);
    expect(await refusal(at('http://10.0.0.7/token'))).toMatch(/^destination\.oauth2\.tokenUrl 10\.0\.0\.7 is /);
    expect(await refusal(at('https://u:p@93.184.215.14/token'))).toMatch(
      /^destination\.oauth2\.tokenUrl credentials in the URL are not allowed/,
    );
    // Private networks allowed (DELIVERY_ALLOW_PRIVATE_NETWORKS): so is a token endpoint on one.
    expect((await at('http://10.0.0.7/token', open)).destination.settings.oauth2?.tokenUrl).toBe(
      'http://10.0.0.7/token',
    );
  });

  it('still checks the receiver URL without its user-info under the SSRF rule', async () => {
    expect(await refusal(checkDestination('https://a:b@10.0.0.8/hook', undefined, false, guarded))).toMatch(
      /^url 10\.0\.0\.8 is /,
    );
  });
});

describe('checkDestination for Kafka with SASL OAUTHBEARER', () => {
  const KAFKA = 'kafka://10.0.0.5:9093/plants';
  const oauthbearer = { sasl: { mechanism: 'oauthbearer' as const }, oauth2, tls: {} };

  it('keeps the OAuth 2 client secret with the sealed secrets, never among the settings', async () => {
    const checked = await checkDestination(KAFKA, oauthbearer, false, open);
    const { clientSecret, ...shown } = oauth2;
    expect(checked.destination).toEqual({
      settings: { sasl: { mechanism: 'oauthbearer' }, oauth2: shown, tls: {} },
      secrets: { clientSecret },
    });
    expect(JSON.stringify(checked.destination.settings)).not.toContain(clientSecret);
  });

  it('refuses what would send a token in clear, twice authenticate, or lacks the client', async () => {
    expect(await refusal(checkDestination(KAFKA, { ...oauthbearer, tls: undefined }, false, open))).toMatch(
      /^destination\.tls is required with sasl oauthbearer/,
    );
    expect(await refusal(checkDestination('kafka://u:p@10.0.0.5:9093/plants', oauthbearer, false, open))).toMatch(
      /^url carries a user and password, and sasl oauthbearer sends a token/,
    );
    expect(await refusal(checkDestination(KAFKA, { ...oauthbearer, oauth2: undefined }, false, open))).toMatch(
      /^destination\.oauth2 is required with sasl oauthbearer/,
    );
    expect(
      await refusal(checkDestination(KAFKA, { ...oauthbearer, oauth2: { ...oauth2, clientSecret: '' } }, false, open)),
    ).toBe('destination.oauth2.clientSecret is required');
  });

  it('refuses oauth2 on a broker that does not take it, and holds the token endpoint to the SSRF rule', async () => {
    expect(await refusal(checkDestination('redis://10.0.0.5:6379/plants', { oauth2 }, false, open))).toMatch(
      /^destination\.oauth2 is for https receivers, and for kafka:\/\/ with destination\.sasl\.mechanism oauthbearer/,
    );
    const internal = { ...oauthbearer, oauth2: { ...oauth2, tokenUrl: 'http://10.0.0.9/token' } };
    expect(await refusal(checkDestination('kafka://93.184.215.14:9093/plants', internal, false, guarded))).toMatch(
      /^destination\.oauth2\.tokenUrl /,
    );
  });
});

// An SQS destination as the gateway takes it: the key and secret from the URL sealed, the URL stored without
// them, a region required, settings of other kinds refused. Hosts are IP literals or names with private networks
// allowed, or an IP literal refused by the SSRF rule: nothing here asks DNS.
describe('checkDestination for SQS', () => {
  it('seals the key and secret, stores the URL without them', async () => {
    const url = 'sqs://AKIAEXAMPLE:s3cr%2Ft@sqs.eu-west-1.amazonaws.com/123456789012/plants.fifo';
    expect(await checkDestination(url, undefined, false, open)).toEqual({
      url: 'sqs://sqs.eu-west-1.amazonaws.com/123456789012/plants.fifo',
      destination: { settings: {}, secrets: { username: 'AKIAEXAMPLE', password: 's3cr/t' } },
    });
  });

  it('refuses an SQS URL without a key and secret, or without a region', async () => {
    expect(await refusal(checkDestination('sqs://sqs.eu-west-1.amazonaws.com/1/q', undefined, false, open))).toMatch(
      /^url needs the access key id and secret access key as its user and password/,
    );
    expect(await refusal(checkDestination('sqs+http://k:s@10.0.0.5:9324/1/q', undefined, false, open))).toMatch(
      /^url needs \?region=<region>/,
    );
  });

  it("refuses other kinds' settings, a token, and a private address under the SSRF rule", async () => {
    const url = 'sqs+http://k:s@10.0.0.5:9324/000000000000/q?region=elasticmq';
    expect(await refusal(checkDestination(url, { maxLen: 5 }, false, open))).toMatch(/^destination.maxLen /);
    expect(await refusal(checkDestination(url, { sasl: { mechanism: 'plain' } }, false, open))).toMatch(
      /^destination.sasl /,
    );
    expect(await refusal(checkDestination(url, undefined, true, open))).toMatch(/^token /);
    expect(await refusal(checkDestination(url, undefined, false, guarded))).toMatch(/^url .*10\.0\.0\.5/);
  });
});
