import { RoomHost, RoomWaits, SLOW_FOR_MS } from './room-waits';

describe(RoomWaits.name, () => {
  const later = () => Date.now() + 60_000;
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`);
  /** A dispatcher with `free` room and the `full` subscribers, none answering unless told. */
  const host = (h: Partial<RoomHost> = {}): RoomHost => ({
    free: () => 80,
    full: () => false,
    rooms: () => () => 8,
    answeredBy: () => 0,
    fewAnswers: () => 6,
    window: 80,
    heldByItsRate: () => false,
    judgedSlow: () => undefined,
    ...h,
  });
  const tick = () => new Promise((r) => setImmediate(r));

  it('waits for an eighth of the window, or for all the write owes if that is less', async () => {
    let free = 0;
    const waits = new RoomWaits(host({ free: () => free }));
    let small = false;
    let big = false;
    void waits.until(['s'], 5, later(), false, () => (small = true));
    void waits.until(['s'], 500, later(), false, () => (big = true));
    free = 5;
    waits.changed();
    await tick();
    expect([small, big]).toEqual([true, false]);
    free = 10;
    waits.changed();
    await tick();
    expect(big).toBe(true);
  });

  it('waits for room for the first event whole, however many it owes, up to the window', async () => {
    let free = 10;
    const waits = new RoomWaits(host({ free: () => free }));
    let answered = false;
    void waits.until(ids(40), 400, later(), false, () => (answered = true));
    waits.changed();
    await tick();
    expect(answered).toBe(false); // room for an eighth, not for the first event
    free = 40;
    waits.changed();
    await tick();
    expect(answered).toBe(true);
    free = 80; // an event owing more than the window waits for the whole window; the room says how big that is
    await expect(waits.until(ids(500), 500, later(), false, () => 'o')).resolves.toMatchObject({ window: 80 });
  });

  it('waits while a subscriber of the first event is full, and says to wait for it still', async () => {
    const full = new Set(['s2']);
    const waits = new RoomWaits(host({ full: (id) => full.has(id) }));
    let answered = false;
    void waits.until(['s1', 's2'], 2, later(), false, () => (answered = true));
    waits.changed();
    await tick();
    expect(answered).toBe(false);
    const room = await waits.until(['s1'], 1, later(), false, () => 'o');
    expect([room.waitFor('s2'), room.waitFor('s1')]).toEqual([true, false]);
    full.clear();
    waits.changed();
    await tick();
    expect(answered).toBe(true);
  });

  it('judges slow a subscriber that stayed full through a wait, answering little', async () => {
    const told: [string, string][] = [];
    const waits = new RoomWaits(host({ full: (id) => id === 'slow', judgedSlow: (...said) => void told.push(said) }));
    const room = await waits.until(['fast', 'slow'], 2, Date.now() + 30, false, () => undefined);
    expect([waits.isSlow('slow'), waits.isSlow('fast')]).toEqual([true, false]);
    // Said once, for the slow one alone (the dispatcher logs it and counts it).
    expect(told).toEqual([['slow', expect.stringMatching(/full for \d+ ms and answered 0 requests/)]]);
    expect(room.waitFor('slow')).toBe(false); // its deliveries become rows now
    let answered = false;
    void waits.until(['slow'], 1, later(), false, () => (answered = true));
    await tick();
    expect(answered).toBe(true); // not waited for
    expect(waits.isSlow('slow', Date.now() + SLOW_FOR_MS + 1)).toBe(false);
  });

  it('judges at once, without a wait, a full subscriber its own rate limit holds back', async () => {
    const told: [string, string][] = [];
    const waits = new RoomWaits(
      host({
        full: (id) => id === 'limited',
        heldByItsRate: (id) => id === 'limited',
        judgedSlow: (...said) => void told.push(said),
      }),
    );
    const t0 = Date.now();
    const room = await waits.until(['limited', 'other'], 2, Date.now() + 5_000, false, () => undefined);
    expect(Date.now() - t0).toBeLessThan(1_000); // no wait of the write for it
    expect(room.waitFor('limited')).toBe(false); // its deliveries become rows at once
    expect(told).toEqual([['limited', expect.stringMatching(/its own rate/)]]);
    // A rate-limited subscriber that is not full is waited for as anyone: it has room.
    const notFull = new RoomWaits(host({ heldByItsRate: () => true }));
    await notFull.until(['limited'], 1, later(), false, () => undefined);
    expect(notFull.isSlow('limited')).toBe(false);
  });

  it('judges nobody slow who stays full but answers by the dozen (an overload): the batch waits in Kafka', async () => {
    // A dozen more answers each time they are counted: at the wait's start, then at its end. (Counted by a timer
    // instead, a loaded machine, the test lanes beside each other, starved the timer and the test failed.)
    let answers = 0;
    const waits = new RoomWaits(host({ full: () => true, answeredBy: () => (answers += 12) }));
    const room = await waits.until(['a', 'b'], 2, Date.now() + 40, false, () => undefined);
    expect(waits.isSlow('a')).toBe(false);
    expect(room.waitFor('a')).toBe(true);
  });

  it('answers at its time, or at once when stopping', async () => {
    const waits = new RoomWaits(host({ free: () => 0 }));
    const t0 = Date.now();
    await waits.until(['s'], 1, t0 + 40, false, () => undefined);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(35);
    let stopping: boolean | undefined;
    void waits.until(['s'], 1, later(), false, () => undefined).then((r) => (stopping = r.stopping));
    waits.changed(true);
    await tick();
    expect(stopping).toBe(true);
    await expect(waits.until(['s'], 1, later(), true, () => 'now')).resolves.toMatchObject({ stopping: true });
  });
});
