import { postPlant, WEBHOOK_TOKEN } from './stack';
import { waitFor } from './wait';

/**
 * Posts version `v` of each plant (named `v<v>`) and waits until every one is stored, so each version is an event
 * of its own and a suite can check that a destination got a plant's versions in order.
 */
export async function postVersionStored(gatewayUrl: string, ids: number[], v: number): Promise<void> {
  const events = new Map<number, string>();
  for (const id of ids) {
    const res = await postPlant(gatewayUrl, { id, name: `v${v}` });
    if (res.status !== 200) throw new Error(`version ${v} of plant ${id}: HTTP ${res.status} ${await res.text()}`);
    events.set(id, ((await res.json()) as { eventId: string }).eventId);
  }
  await waitFor(`version ${v} stored`, async () => {
    for (const [id, eventId] of events) {
      const res = await fetch(`${gatewayUrl}/plants/${id}`, { headers: { authorization: `Bearer ${WEBHOOK_TOKEN}` } });
      if (!res.ok || ((await res.json()) as { lastEventId: string }).lastEventId !== eventId) return false;
    }
    return true;
  });
}
