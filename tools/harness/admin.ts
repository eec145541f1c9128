import { ADMIN_TOKEN } from './tokens';
import { waitFor } from './wait';

/** A small client for the admin API, as an operator's script would use it. */
export function adminClient(gatewayUrl: string, token = ADMIN_TOKEN) {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gatewayUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
  /** What the delivery log holds now; see recordedDeliveriesOf for a delivery just seen by a receiver. */
  const deliveriesOf = async (subscriptionId: string, extra = '') =>
    (await call('GET', `/deliveries?subscriptionId=${subscriptionId}${extra}`)).body.items as {
      id: string;
      status: string;
      plantId: number;
    }[];
  return {
    call,
    /** The bearer token it calls with (a raw-socket test writes it itself). */
    token,
    subscribe: async (body: Record<string, unknown>) => {
      const res = await call('POST', '/subscriptions', body);
      if (res.status !== 201) throw new Error(`subscribe failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body as { id: string; secret: string };
    },
    deliveriesOf,
    /**
     * Waits until at least `count` deliveries match and none of them is pending, then lists them. A receiver has a
     * request before the worker records its outcome (outcomes are appended in bulk after the batch is sent), so a
     * test that reads the log right after its receiver saw a request must wait here, not read `deliveriesOf` once.
     */
    recordedDeliveriesOf: (subscriptionId: string, count: number, extra = '') =>
      waitFor(`${count} recorded deliveries of ${subscriptionId}${extra}`, async () => {
        const items = await deliveriesOf(subscriptionId, extra);
        return items.length >= count && items.every((d) => d.status !== 'pending') ? items : null;
      }),
  };
}
