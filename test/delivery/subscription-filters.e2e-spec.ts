import { adminClient } from '../../tools/harness/admin';
import { Receiver } from '../../tools/harness/receiver';
import { OwnStack, startOwnStack } from '../../tools/harness/own-stack';
import * as e2e from '../../tools/harness/stack';
import { waitFor } from '../../tools/harness/wait';

// A subscriber gets only the plants its filter lets through: no delivery row at all for the others. In a database
// and topics of its own: its worker sends this suite's deliveries alone, and the unfiltered subscriber gets only
// this suite's plants.
describe('subscription filters: only these tags, plant ids in a range', () => {
  let stack: OwnStack;
  let gw: e2e.RunningGateway;
  const receiver = new Receiver();
  const nextId = e2e.plantIds();
  let admin: ReturnType<typeof adminClient>;

  beforeAll(async () => {
    await receiver.start();
    stack = await startOwnStack('filters');
    gw = stack.gateway;
    admin = adminClient(gw.url);
  });

  afterAll(async () => {
    await stack?.close();
    await receiver.stop();
  });

  const subscribe = (path: string, filter?: unknown) =>
    admin.call('POST', '/subscriptions', { url: receiver.url + path, filter });

  it('delivers only matching plants, writes no delivery for the rest, and follows a changed filter', async () => {
    const base = nextId();
    for (let i = 0; i < 10; i++) nextId();
    const byTag = await subscribe('/tags', { tags: ['indoor', 'succulent'] });
    expect(byTag.status).toBe(201);
    expect(byTag.body.filter).toEqual({ tags: ['indoor', 'succulent'] });
    const byRange = await subscribe('/range', { plantIds: { min: base + 2, max: base + 3 } });
    const all = await subscribe('/all');
    const plants = [
      { id: base, name: 'Fern', tag: 'indoor' },
      { id: base + 1, name: 'Oak', tag: 'outdoor' },
      { id: base + 2, name: 'Aloe', tag: 'succulent' },
      { id: base + 3, name: 'Moss' }, // no tag: a tag filter does not let it through
    ];
    for (const p of plants) expect((await e2e.postPlant(gw.url, p)).status).toBe(200);
    await waitFor(
      'every plant at the unfiltered subscriber',
      () => receiver.on('/all', ...plants.map((p) => p.id)).length === 4,
    );
    await waitFor('the filtered ones', () => receiver.on('/tags', ...plants.map((p) => p.id)).length === 2);
    await waitFor('the range', () => receiver.on('/range', ...plants.map((p) => p.id)).length === 2);
    const ids = (path: string) =>
      receiver
        .on(path, ...plants.map((p) => p.id))
        .map((r) => JSON.parse(r.body).id)
        .sort();
    expect(ids('/tags')).toEqual([base, base + 2]);
    expect(ids('/range')).toEqual([base + 2, base + 3]);
    // Filtered out means no delivery row, not a skipped one. Each of ours once to the unfiltered one.
    const recorded = async (id: string) => (await admin.recordedDeliveriesOf(id, 2)).map((d) => d.plantId).sort();
    expect(await recorded(byTag.body.id)).toEqual([base, base + 2]);
    expect(await recorded(byRange.body.id)).toEqual([base + 2, base + 3]);
    for (const p of plants)
      expect(await admin.recordedDeliveriesOf(all.body.id, 1, `&plantId=${p.id}`)).toHaveLength(1);

    const changed = await admin.call('PATCH', `/subscriptions/${byTag.body.id}`, { filter: { tags: ['outdoor'] } });
    expect(changed.status).toBe(200);
    expect(changed.body.filter).toEqual({ tags: ['outdoor'] });
    expect((await e2e.postPlant(gw.url, { id: base + 4, name: 'Elm', tag: 'outdoor' })).status).toBe(200);
    await waitFor('the changed filter applied', () => receiver.on('/tags', base + 4).length === 1);
    const cleared = await admin.call('PATCH', `/subscriptions/${byTag.body.id}`, { filter: {} });
    expect(cleared.body.filter).toEqual({});
    const audit = await admin.call('GET', `/audit?subscriptionId=${byTag.body.id}`);
    expect(audit.body.items[0].details.filter).toEqual({});
  });

  it.each([
    [{ tags: [] }, 'filter.tags'],
    [{ tags: ['a', 'a'] }, 'filter.tags'],
    [{ plantIds: {} }, 'filter.plantIds'],
    [{ plantIds: { min: 10, max: 1 } }, 'filter.plantIds'],
    [{ plantIds: { min: 1.5 } }, 'filter.plantIds.min'],
    [{ colour: 'green' }, 'filter'],
  ])('refuses the filter %j with 422 naming %s', async (filter, field) => {
    const res = await subscribe('/never', filter);
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });
});
