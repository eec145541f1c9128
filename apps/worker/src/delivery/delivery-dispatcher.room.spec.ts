import { delivery, ok, setup, until } from './delivery-dispatcher.fixtures-spec';
import { SendResult } from './delivery-sender';
import { SendQueue } from './send-queue';

// roomFor: how ingest holds a consumed batch while the window is full, rather than write every delivery as a row.
describe('DeliveryDispatcher.roomFor', () => {
  it('answers at once while there is room for the deliveries asked', async () => {
    const { sut, inbox } = setup(); // a window of 4
    const { offer } = await inbox.roomFor(['s1'], 3, Date.now() + 60_000);
    expect(offer.limit).toBe(4);
    await sut.onModuleDestroy();
  });

  it('counts the shares of the window once per answer, however many subscribers the write asks about', async () => {
    const { sut, inbox } = setup();
    const room = await inbox.roomFor(['s1'], 1, Date.now() + 60_000);
    const shares = jest.spyOn(SendQueue.prototype, 'windowShare');
    for (let i = 0; i < 200; i++) room.roomOf(`s${i}`);
    expect(shares).not.toHaveBeenCalled(); // once per subscriber, a write to many was O(subscribers²) a turn
    shares.mockRestore();
    await sut.onModuleDestroy();
  });

  it('waits while the window is full, and answers as deliveries leave it', async () => {
    const { sut, inbox, hold } = setup();
    const answers: (() => void)[] = [];
    hold(() => new Promise<SendResult>((r) => answers.push(() => r(ok))));
    inbox.accept(
      [1, 2, 3, 4].map((i) => delivery(`d${i}`, `s${i}`, `e${i}`)),
      { events: 0, rowsFor: [] },
    );
    let answered: number | undefined;
    // Asks for 3, more than an eighth of the window (4): room for one is enough to go on with.
    void inbox.roomFor(['s9'], 3, Date.now() + 60_000).then((o) => (answered = o.offer.limit));
    await until('two on the wire', () => answers.length === 2);
    await new Promise((r) => setTimeout(r, 30));
    expect(answered).toBeUndefined(); // full
    answers.shift()!();
    await until('room for one', () => answered !== undefined);
    expect(answered).toBeGreaterThanOrEqual(1);
    answers.forEach((a) => a());
    await sut.onModuleDestroy();
  });

  it('waits while a subscriber of the first event holds its share, though the window has room', async () => {
    const { sut, inbox, hold } = setup({ DELIVERY_CONCURRENCY_PER_SUBSCRIPTION: '1' }); // s1 holds 2 at most
    const answers: (() => void)[] = [];
    hold(() => new Promise<SendResult>((r) => answers.push(() => r(ok))));
    inbox.accept([delivery('a', 's1', 'e1'), delivery('b', 's1', 'e2')], { events: 0, rowsFor: [] });
    expect((await inbox.roomFor(['s2'], 1, Date.now() + 60_000)).waitFor('s1')).toBe(true);
    let answered: boolean | undefined;
    void inbox.roomFor(['s2', 's1'], 2, Date.now() + 60_000).then((r) => (answered = r.waitFor('s1')));
    await until('one on the wire', () => answers.length === 1);
    await new Promise((r) => setTimeout(r, 30));
    expect(answered).toBeUndefined(); // s1 full, two free
    answers.shift()!();
    await until('s1 has room', () => answered !== undefined);
    expect(answered).toBe(false);
    answers.forEach((a) => a());
    await sut.onModuleDestroy();
  });

  it('answers when its time is up, whatever the room', async () => {
    const { sut, inbox, hold } = setup();
    hold(() => new Promise<SendResult>((r) => setTimeout(() => r(ok), 300))); // answered after the time is up
    inbox.accept(
      [1, 2, 3, 4].map((i) => delivery(`d${i}`, `s${i}`, `e${i}`)),
      { events: 0, rowsFor: [] },
    );
    const asked = Date.now();
    const { offer } = await inbox.roomFor(['s9'], 4, asked + 80);
    expect(Date.now() - asked).toBeGreaterThanOrEqual(70);
    expect(offer.limit).toBe(0);
    await sut.onModuleDestroy();
  });

  it('answers a waiting write with nothing to take on when the worker stops', async () => {
    const { sut, inbox, hold } = setup();
    hold(() => new Promise<SendResult>((r) => setTimeout(() => r(ok), 20)));
    inbox.accept(
      [1, 2, 3, 4].map((i) => delivery(`d${i}`, `s${i}`, `e${i}`)),
      { events: 0, rowsFor: [] },
    );
    const waiting = inbox.roomFor(['s9'], 4, Date.now() + 60_000);
    await sut.onModuleDestroy();
    await expect(waiting).resolves.toMatchObject({ offer: { limit: 0 } });
  });
});
