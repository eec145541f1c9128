import { Outbox } from '@app/delivery';
import { RateLimitedLog } from '@app/observability';
import { DeliveryIntake, IntakeHost } from './delivery-intake';
import { DeliverySignal } from './delivery-signal';

/**
 * A dispatcher with room to spare and nothing on the wire, whose subscribers left out are `left`; its outbox has no
 * event to fan out and no due row to claim. Each freed slot then notifies the loop, as the dispatcher does.
 */
function intakeWith(left: { full: string[]; shut: string[] }, deferredFor: string[] = []) {
  const claims: string[][] = [];
  const outbox = {
    // Each fan-out wrote rows for `deferredFor`, as one beside a subscriber left out does.
    fanOut: async () => ({ claimed: [], more: false, deferred: deferredFor.length, deferredFor }),
    claimDue: async (_limit: number, exclude: string[]) => (claims.push(exclude), { claimed: [], more: false }),
  } as unknown as Outbox;
  const signal = new DeliverySignal();
  const host: IntakeHost = { free: () => 100, leftOut: () => left, idle: () => true, sending: () => 0, take: () => {} };
  const intake = new DeliveryIntake(
    outbox,
    signal,
    host,
    { window: 100, pollMs: 60_000, leaseMs: 30_000 },
    new RateLimitedLog(() => undefined),
  );
  return { intake, claims };
}

const turn = (ms = 5) => new Promise((r) => setTimeout(r, ms));

/** Starts the loop, frees room `times` times `gapMs` apart, stops it: the claims it made. */
async function claimsAfterFreedRoom(left: { full: string[]; shut: string[] }, times: number, gapMs = 5) {
  const { intake, claims } = intakeWith(left);
  const loop = intake.run();
  await turn();
  for (let i = 0; i < times; i++) {
    intake.roomFreed();
    await turn(gapMs);
  }
  intake.stop();
  await loop;
  return claims;
}

describe('DeliveryIntake', () => {
  it('claims again as room frees while a subscriber was left out for a full queue: its rows wait for it', async () => {
    // Each past the quiet time that follows an empty claim (below).
    const claims = await claimsAfterFreedRoom({ full: ['busy'], shut: [] }, 5, 70);
    expect(claims.length).toBeGreaterThanOrEqual(5);
    expect(claims[0]).toEqual(['busy']);
  });

  it('does not claim again for a subscriber whose gate is shut: its opening says when (issue #36)', async () => {
    // Beside a tenth whose circuit stayed open, every freed slot claimed again and found nothing: ~170 empty claims
    // a second, a quarter of a core of PostgreSQL, and the nine's p95 doubled (bench:noisy-neighbour).
    const claims = await claimsAfterFreedRoom({ full: [], shut: ['failing'] }, 5);
    expect(claims).toEqual([['failing']]); // the first look only, leaving it out
  });

  it('claims rows flagged right after an empty claim at most every 50 ms, and then without waiting for the poll', async () => {
    // Ingest writes a row for every event of a subscriber whose gate stays shut, and flags rows each time: beside a
    // failing tenth that was ~80 empty claims a second (bench:noisy-neighbour).
    const { intake, claims } = intakeWith({ full: [], shut: ['failing'] });
    const loop = intake.run();
    await turn();
    const started = Date.now();
    for (let i = 0; i < 40; i++) {
      intake.moreRows();
      intake.roomFreed();
      await turn();
    }
    const elapsed = Date.now() - started;
    await new Promise((r) => setTimeout(r, 80)); // the last flag is claimed after the quiet time, the poll is 60 s
    intake.stop();
    await loop;
    expect(claims.length).toBeGreaterThanOrEqual(2);
    expect(claims.length).toBeLessThanOrEqual(2 + Math.ceil((elapsed + 80) / 50));
  });

  it.each([
    ['a shut gate: they wait for it to open, no claim', ['failing'], false],
    ['a subscriber that may be sent to: they are claimed', ['healthy'], true],
  ])('after fan-outs that wrote rows for %s', async (_case, deferredFor, claimsAgain) => {
    // Beside a tenth whose circuit stayed open, each fan-out (and each ingest batch) wrote a row for it and flagged
    // a claim: 3.5 times the claims of a healthy tenth, each finding nothing (bench:noisy-neighbour).
    const { intake, claims } = intakeWith({ full: [], shut: ['failing'] }, deferredFor);
    const loop = intake.run();
    await turn();
    for (let i = 0; i < 4; i++) {
      intake.moreEvents();
      intake.roomFreed();
      await turn(70); // past the quiet time after an empty claim
    }
    intake.stop();
    await loop;
    if (claimsAgain) expect(claims.length).toBeGreaterThanOrEqual(4);
    else expect(claims).toEqual([['failing']]); // the first look only
  });

  it('claims again once a shut gate opens', async () => {
    const { intake, claims } = intakeWith({ full: [], shut: [] });
    const loop = intake.run();
    await turn();
    intake.lookAgain();
    await turn();
    intake.stop();
    await loop;
    expect(claims).toHaveLength(2);
  });
});
