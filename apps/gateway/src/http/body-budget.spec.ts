import { BodyBudget } from './body-budget';

describe(BodyBudget.name, () => {
  it('grants bytes up to the whole budget, then refuses, taking nothing for a refusal', () => {
    const budget = new BodyBudget(100, 100);
    const a = budget.open('a');
    expect(a.grow(60)).toBeNull();
    const b = budget.open('b');
    expect(b.grow(41)).toBe('budget');
    expect(b.bytes).toBe(0);
    expect(budget.held).toBe(60);
    expect(b.grow(40)).toBeNull();
    expect(budget.held).toBe(100);
  });

  it('keeps a sender within its share, whatever is left of the budget, and others keep theirs', () => {
    const budget = new BodyBudget(100, 30);
    const first = budget.open('greedy');
    const second = budget.open('greedy');
    expect(first.grow(20)).toBeNull();
    expect(second.grow(11)).toBe('share'); // the share counts every body of the sender's together
    expect(second.grow(10)).toBeNull();
    expect(budget.heldBy('greedy')).toBe(30);
    expect(budget.open('other').grow(30)).toBeNull();
  });

  it('says "share" before "budget" when both are spent, so the sender past its share is told so', () => {
    const budget = new BodyBudget(50, 30);
    expect(budget.open('a').grow(30)).toBeNull();
    expect(budget.open('b').grow(20)).toBeNull();
    expect(budget.open('a').grow(1)).toBe('share');
    expect(budget.open('c').grow(1)).toBe('budget');
  });

  it('gives every byte back on release, once, however often it is called', () => {
    const budget = new BodyBudget(100, 100);
    const a = budget.open('a');
    const b = budget.open('a');
    a.grow(30);
    a.grow(20);
    b.grow(10);
    a.release();
    a.release();
    expect(budget.held).toBe(10);
    expect(budget.heldBy('a')).toBe(10);
    expect(a.bytes).toBe(0);
    b.release();
    expect(budget.held).toBe(0);
    expect(budget.senders).toBe(0); // no entry left behind for a sender that holds nothing
  });

  it('refuses to grow a released reservation (its bytes would never come back)', () => {
    const r = new BodyBudget(100, 100).open('a');
    r.release();
    expect(() => r.grow(1)).toThrow(/released/);
  });

  it('refuses a share above the budget, and sizes that are not byte counts', () => {
    expect(() => new BodyBudget(10, 11)).toThrow(/share/);
    const r = new BodyBudget(100, 100).open('a');
    expect(() => r.grow(-1)).toThrow();
    expect(() => r.grow(1.5)).toThrow();
    expect(() => r.grow(NaN)).toThrow();
  });
});
