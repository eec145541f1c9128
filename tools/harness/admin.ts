import { ADMIN_TOKEN } from './tokens';

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
  return {
    call,
    subscribe: async (body: Record<string, unknown>) => {
      const res = await call('POST', '/subscriptions', body);
      if (res.status !== 201) throw new Error(`subscribe failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body as { id: string; secret: string };
    },
    deliveriesOf: async (subscriptionId: string, extra = '') =>
      (await call('GET', `/deliveries?subscriptionId=${subscriptionId}${extra}`)).body.items as {
        id: string;
        status: string;
        plantId: number;
      }[],
  };
}
