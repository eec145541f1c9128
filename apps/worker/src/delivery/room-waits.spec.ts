import { RoomWaits, SLOW_FOR_MS } from './room-waits';

describe(RoomWaits.name, () => {
  const later = () => Date.now() + 60_000;
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`);

  it('waits for an eighth of the window, or for all the write owes if that is less', async () => {
    let free = 0;
    const waits = new RoomWaits(
      () => free,
      () => false,
      80,
    );
    let small = false;
    let big = false;
    void waits.until(['s'], 5, later(), false, () => (small = true));
    void waits.until(['s'], 500, later(), false, () => (big = true));
    free = 5;
    waits.changed();
    await Promise.resolve();
    expect([small, big]).toEqual([true, false]);
    free = 10;
    waits.changed();
    await Promise.resolve();
    expect(big).toBe(true);
  });

  it('waits for room for the first event whole, however many it owes, up to the window', async () => {
    let free = 10;
    const waits = new RoomWaits(
      () => free,
      () => false,
      80,
    );
    let answered = false;
    void waits.until(ids(40), 400, later(), false, () => (answered = true));
    waits.changed();
    await Promise.resolve();
    expect(answered).toBe(false); // room for an eighth, not for the first event
    free = 40;
    waits.changed();
    await Promise.resolve();
    expect(answered).toBe(true);
    free = 80; // an event owing more than the window waits for the whole window, then goes to a fan-out
    await expect(waits.until(ids(500), 500, later(), false, () => 'whole window')).resolves.toMatchObject({
      offer: 'whole window',
    });
  });

  it('waits while a subscriber of the first event is full', async () => {
    const full = new Set(['s2']);
    const waits = new RoomWaits(
      () => 80,
      (id) => full.has(id),
      80,
    );
    let answered = false;
    void waits.until(['s1', 's2'], 2, later(), false, () => (answered = true));
    waits.changed();
    await Promise.resolve();
    expect(answered).toBe(false);
    full.clear();
    waits.changed();
    await Promise.resolve();
    expect(answered).toBe(true);
  });

  it('does not wait again, for a while, for a subscriber it waited for in vain', async () => {
    const waits = new RoomWaits(
      () => 80,
      (id) => id === 'slow',
      80,
    );
    const t0 = Date.now();
    await waits.until(['fast', 'slow'], 2, t0 + 30, false, () => undefined);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(25);
    expect(waits.isSlow('slow')).toBe(true);
    expect(waits.isSlow('fast')).toBe(false);
    let answered = false;
    void waits.until(['slow'], 1, later(), false, () => (answered = true));
    await Promise.resolve();
    expect(answered).toBe(true);
    expect(waits.isSlow('slow', Date.now() + SLOW_FOR_MS + 1)).toBe(false);
  });

  it('answers at its time, or at once when stopping', async () => {
    const waits = new RoomWaits(
      () => 0,
      () => false,
      80,
    );
    const t0 = Date.now();
    await waits.until(['s'], 1, t0 + 40, false, () => undefined);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(35);
    let answered = false;
    void waits.until(['s'], 1, later(), false, () => (answered = true));
    waits.changed(true);
    await Promise.resolve();
    expect(answered).toBe(true);
    await expect(waits.until(['s'], 1, later(), true, () => 'now')).resolves.toMatchObject({ offer: 'now' });
  });
});
