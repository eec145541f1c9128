import { randomBytes } from 'node:crypto';
import { fannedOutDelivery, sendSettingsOf } from '@app/delivery';
import { SecretBox, secretHeaderContext, subscriptionContext } from '../secrets/secret-box';
import {
  LoadedSubscriber,
  newLease,
  openSubscriber,
  SendRow,
  SUBSCRIPTION_SEND_FIELDS,
  toClaimedDelivery,
} from './send-row';

// A delivery leaves three ways: claimed from its row (toClaimedDelivery), fanned out in memory from the worker's
// copy of its subscriber (openSubscriber, then fannedOutDelivery), or as a test send. A broker's credentials once
// reached only the first, because the second listed the columns again: both now read SUBSCRIPTION_SEND_FIELDS, and
// this checks that they send with the same settings.
describe('send settings', () => {
  const box = new SecretBox(randomBytes(32));
  const id = 'a4b2c3d4-0000-4000-8000-000000000001';
  const seal = (v: string) => box.seal(v, subscriptionContext(id));
  const columns = {
    url: 'amqp://broker.example:5672/plants',
    token: seal('tok-123'),
    secret: seal('whsec_current'),
    previous_secret: null,
    max_deliveries_per_second: 7,
    max_concurrency: 3,
    headers: { 'x-team': 'greenhouse' },
    secret_headers: { 'x-api-key': box.seal('k-1', secretHeaderContext(id, 'x-api-key')) },
    destination: { tls: { ca: '-----BEGIN CERTIFICATE-----' } },
    destination_secrets: seal(JSON.stringify({ username: 'u', password: 'p' })),
  };

  it("are the same whether a delivery is claimed from its row or fanned out from the worker's copy", () => {
    const row: SendRow = {
      ...columns,
      id: 'd1',
      subscription_id: id,
      event_id: 'e1',
      plant_id: 5,
      body: '{}',
      event_time: new Date(),
      attempts: 0,
      hops: 0,
      origin_event_id: null,
      traceparent: null,
    };
    const loaded: LoadedSubscriber = { ...columns, id, previous_until: null, filter: {}, kind: 'plants' };
    const claimed = toClaimedDelivery(row, box, newLease(1000));
    const subscriber = openSubscriber(loaded, box);
    const event = { eventId: 'e1', plantId: 5, eventTime: new Date().toISOString(), hops: 0, originEventId: 'e1' };
    const fanned = fannedOutDelivery(event as never, '{}', subscriber, newLease(1000));
    expect(sendSettingsOf(subscriber)).toEqual(sendSettingsOf(claimed));
    expect(sendSettingsOf(fanned)).toEqual(sendSettingsOf(claimed));
    expect(fanned.secrets).toEqual(claimed.secrets);
    expect(sendSettingsOf(claimed)).toMatchObject({
      token: 'tok-123',
      limits: { maxDeliveriesPerSecond: 7, maxConcurrency: 3 },
      secretHeaders: { 'x-api-key': 'k-1' },
      destination: { secrets: { username: 'u', password: 'p' } },
    });
  });

  it('come from every column the send list names', () => {
    // A column added to SUBSCRIPTION_SEND_FIELDS and to this fixture but not opened would leave a setting unset.
    expect(Object.keys(columns).sort()).toEqual([...SUBSCRIPTION_SEND_FIELDS, 'previous_secret'].sort());
  });
});
