import { ProblemException } from '@app/observability';
import { checkDestination, DestinationRules } from './destination-check';

// An SQS destination as the gateway takes it: the key and secret from the URL sealed, the URL stored without
// them, a region required, settings of other kinds refused. Hosts are IP literals or names with private networks
// allowed, or an IP literal refused by the SSRF rule: nothing here asks DNS.
const open: DestinationRules = { allowPrivateNetworks: true, ownBrokers: [], ownTopic: 'plant.created' };
const guarded: DestinationRules = { ...open, allowPrivateNetworks: false };

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
