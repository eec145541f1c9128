import { GatewayConfig } from '@app/config';
import { AuditRepository, SubscriptionChange, SubscriptionRepository, SubscriptionRow } from '@app/persistence';
import { SubscriptionTester } from './subscription-tester';
import { SubscriptionsService } from './subscriptions.service';

// Issue 36 (b): a portal link moved the subscription to a URL of its holder's choosing, and the next test send
// carried the operator's secret header (and token) there.
const OPERATOR_URL = 'https://receiver.example/hook';
const HOLDERS_URL = 'https://holder.example/catch';

const row = (over: Partial<SubscriptionRow> = {}): SubscriptionRow =>
  ({
    id: 's1',
    url: OPERATOR_URL,
    token: 'sealed-token',
    enabled: true,
    disabled_reason: null,
    disabled_by_operator: false,
    headers: { 'X-Team': 'plants' },
    secret_headers: { 'X-Api-Key': 'sealed-key' },
    filter: {},
    kind: 'plants',
    event_types: null,
    signature: 'symmetric',
    public_key: null,
    previous_public_key: null,
    previous_secret_expires_at: null,
    paused_until: null,
    circuit_state: 'closed',
    created_at: new Date(0),
    updated_at: new Date(0),
    ...over,
  }) as SubscriptionRow;

function service() {
  const changes: SubscriptionChange[] = [];
  const audited: { details: Record<string, unknown> }[] = [];
  const subscriptions = {
    findById: async () => row(),
    headersOf: () => ({ plain: { 'X-Team': 'plants' }, secret: { 'X-Api-Key': 'operator-key' } }),
    update: async (_id: string, change: SubscriptionChange) => {
      changes.push(change);
      return row({ url: change.url ?? OPERATOR_URL });
    },
  } as unknown as SubscriptionRepository;
  const audit = { record: async (e: { details: Record<string, unknown> }) => void audited.push(e) };
  const config = { DELIVERY_ALLOW_PRIVATE_NETWORKS: true } as GatewayConfig;
  const s = new SubscriptionsService(
    subscriptions,
    audit as unknown as AuditRepository,
    {} as SubscriptionTester,
    config,
  );
  return { s, changes, audited };
}

describe('a portal link changing the URL', () => {
  it("leaves the operator's secret headers and token behind, for the URL they were read with", async () => {
    const { s, changes, audited } = service();
    await s.update('s1', { url: HOLDERS_URL }, 'portal-link:l1', true);
    expect(changes[0]).toMatchObject({
      url: HOLDERS_URL,
      token: null,
      headers: { plain: { 'X-Team': 'plants' }, secret: {} },
      credentialsFor: OPERATOR_URL,
    });
    expect(audited[0].details).toMatchObject({
      leftBehindWithTheOldUrl: { token: true, secretHeaders: ['X-Api-Key'] },
    });
  });

  it('sends on only what the same change sets: the holder gave it', async () => {
    const { s, changes } = service();
    await s.update('s1', { url: HOLDERS_URL, token: 'holders-token', secretHeaders: { 'X-Holder': 'h' } }, 'p', true);
    expect(changes[0]).toMatchObject({ token: 'holders-token', headers: { secret: { 'X-Holder': 'h' } } });
  });

  it("keeps them when the URL stays, and when the operator changes it (the operator's own choice)", async () => {
    const { s, changes } = service();
    await s.update('s1', { url: OPERATOR_URL, description: 'mine' }, 'p', true);
    await s.update('s1', { url: HOLDERS_URL }, 'admin', false);
    for (const change of changes) {
      expect(change.headers).toBeUndefined();
      expect('token' in change).toBe(false);
    }
  });

  it('writes headers only for the URL they were read with, whoever changes them', async () => {
    const { s, changes } = service();
    await s.update('s1', { secretHeaders: { 'X-Other': 'o' } }, 'admin', false);
    expect(changes[0]).toMatchObject({
      headers: { secret: { 'X-Api-Key': 'operator-key', 'X-Other': 'o' } },
      credentialsFor: OPERATOR_URL,
    });
  });
});
