import { DeliveryStep, DeliverySteps, isFinal } from './delivery-steps';
import { claimedDelivery } from './claimed-delivery.fixture-spec';

const delivery = (id: string, subscriptionId = 's1') => claimedDelivery(id, { subscriptionId });

/** A delivery taken and moved along `path`. */
const at = (steps: DeliverySteps, id: string, ...path: DeliveryStep[]) => {
  const d = delivery(id);
  steps.take(d);
  for (const step of path) steps.move(d, step);
  return d;
};

describe(DeliverySteps.name, () => {
  it('follows a delivery from taken through queued, sending and recording to recorded', () => {
    const steps = new DeliverySteps();
    const d = delivery('d1');
    steps.take(d);
    expect(steps.stepOf(d)).toBe('taken');
    for (const step of ['queued', 'sending', 'recording'] as const) {
      steps.move(d, step);
      expect(steps.stepOf(d)).toBe(step);
    }
    steps.move(d, 'recorded');
    expect(steps.stepOf(d)).toBeUndefined();
  });

  it('refuses to take a delivery it holds already', () => {
    const steps = new DeliverySteps();
    const d = at(steps, 'd1', 'queued');
    expect(() => steps.take(d)).toThrow('delivery d1 taken twice');
    expect(steps.stepOf(d)).toBe('queued');
  });

  it.each<[DeliveryStep[], DeliveryStep]>([
    [[], 'sending'],
    [[], 'lease-lost'],
    [['queued'], 'taken'],
    [['queued', 'sending'], 'queued'],
    [['queued', 'sending'], 'handed-back'],
    [['queued', 'sending', 'recording'], 'withdrawn'],
  ])('throws on a move off the table: after %j, to %s', (path, to) => {
    const steps = new DeliverySteps();
    const d = at(steps, 'd1', ...path);
    const from = path.at(-1) ?? 'taken';
    expect(() => steps.move(d, to)).toThrow(`delivery d1: no step from ${from} to ${to}`);
    expect(steps.stepOf(d)).toBe(from);
    expect(steps.count(from)).toBe(1);
  });

  it('throws on moving a delivery it does not hold, or no longer holds', () => {
    const steps = new DeliverySteps();
    expect(() => steps.move(delivery('d1'), 'queued')).toThrow('delivery d1: no step from (not held) to queued');
    const d = at(steps, 'd2', 'handed-back');
    expect(() => steps.move(d, 'queued')).toThrow('delivery d2: no step from (not held) to queued');
  });

  it('counts the deliveries in each step as they move', () => {
    const steps = new DeliverySteps();
    at(steps, 'a');
    at(steps, 'b', 'queued');
    at(steps, 'c', 'queued');
    const d = at(steps, 'd', 'queued', 'sending');
    expect([steps.count('taken'), steps.count('queued'), steps.count('sending'), steps.count('recording')]).toEqual([
      1, 2, 1, 0,
    ]);
    steps.move(d, 'recording');
    expect([steps.count('sending'), steps.count('recording')]).toEqual([0, 1]);
  });

  it('holds in its window only what is queued, sending or recording, not what is merely taken', () => {
    const steps = new DeliverySteps();
    at(steps, 'a');
    at(steps, 'b', 'queued');
    at(steps, 'c', 'queued', 'sending');
    const d = at(steps, 'd', 'queued', 'sending', 'recording');
    expect(steps.held()).toBe(3);
    steps.move(d, 'unrecorded');
    expect(steps.held()).toBe(2);
  });

  it.each<[DeliveryStep[], DeliveryStep]>([
    [[], 'handed-back'],
    [['queued'], 'lease-lost'],
    [['queued'], 'withdrawn'],
    [['queued', 'sending'], 'unrecorded'],
    [['queued', 'sending', 'recording'], 'recorded'],
  ])('drops the delivery on a final step: after %j, to %s', (path, to) => {
    const steps = new DeliverySteps();
    const d = at(steps, 'd1', ...path);
    steps.move(d, to);
    expect(steps.stepOf(d)).toBeUndefined();
    expect(steps.count(path.at(-1) ?? 'taken')).toBe(0);
    expect(steps.count(to)).toBe(0);
    expect(steps.held()).toBe(0);
    steps.take(d); // dropped, so it may be taken again
    expect(steps.stepOf(d)).toBe('taken');
  });

  it('calls final exactly the steps with no way out', () => {
    const all: DeliveryStep[] = [
      'taken',
      'queued',
      'sending',
      'recording',
      'recorded',
      'handed-back',
      'lease-lost',
      'withdrawn',
      'unrecorded',
    ];
    expect(all.filter(isFinal)).toEqual(['recorded', 'handed-back', 'lease-lost', 'withdrawn', 'unrecorded']);
  });
});
