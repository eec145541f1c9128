import { buildOpenApiDocument } from '@app/contracts';
import { ProblemException } from '@app/observability';
import { PortalChangeRate } from './portal-change-rate';

const rate = (burst = 2) =>
  new PortalChangeRate({ PORTAL_LINK_CHANGES_PER_MINUTE: 30, PORTAL_LINK_CHANGES_BURST: burst });
const patch = () => ({ method: 'PATCH' });

/** What charge threw, as the client would see it. */
function refusal(fn: () => void): ProblemException {
  try {
    fn();
  } catch (err) {
    return err as ProblemException;
  }
  throw new Error('expected a refusal');
}

// Issue 36, finding 5: 300 alternating PATCHes from one portal link in 1.6 s, all 200, each making every worker
// reload every subscription.
describe(PortalChangeRate.name, () => {
  it('refuses a link past its burst with 429 problem+json and Retry-After, saying what to do', () => {
    const changes = rate();
    changes.charge('link-a', patch());
    changes.charge('link-a', patch());
    const refused = refusal(() => changes.charge('link-a', patch()));
    expect(refused).toBeInstanceOf(ProblemException);
    expect(refused.problem).toMatchObject({
      type: 'https://plant.store/problems/too-many-requests',
      status: 429,
      reason: 'portal-link-change-rate',
      retryAfterSeconds: 2, // one change every 2 s at 30 a minute
    });
    expect(refused.problem.detail).toMatch(/this one was not made\. Retry in 2 s \(Retry-After\)/);
    expect(refused.problem.detail).toMatch(/ask the Plant Store operator/);
    expect(refused.headers).toEqual({ 'retry-after': '2' });
  });

  it('replays the finding: of 300 changes at once, the burst goes through and the rest are refused', () => {
    const changes = rate(10);
    let made = 0;
    for (let i = 0; i < 300; i++) {
      try {
        changes.charge('link-a', patch());
        made++;
      } catch (err) {
        expect((err as ProblemException).problem.status).toBe(429);
      }
    }
    // The burst, and what the rate refilled meanwhile (one every 2 s: none, unless the machine is very slow).
    expect(made).toBeGreaterThanOrEqual(10);
    expect(made).toBeLessThanOrEqual(12);
    // Another link's changes are its own: nothing of link-a's spent them.
    expect(() => changes.charge('link-b', patch())).not.toThrow();
  });

  it('charges neither reads nor a request twice (the guards run before the body and again in Nest)', () => {
    const changes = rate(1);
    for (let i = 0; i < 50; i++) changes.charge('link-a', { method: i % 2 ? 'GET' : 'HEAD' });
    const req = patch();
    changes.charge('link-a', req);
    changes.charge('link-a', req); // the same request, its second guard
    expect(refusal(() => changes.charge('link-a', patch())).problem.status).toBe(429);
    expect(changes.links).toBe(1);
  });

  it('is declared by every operation a portal link may call that is not a read, with Retry-After', () => {
    const paths = buildOpenApiDocument().paths as Record<
      string,
      Record<string, { security?: object[]; responses: Record<string, { headers?: object }> }>
    >;
    const charged = Object.entries(paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method, op]) => method !== 'get' && op.security?.some((s) => 'portalAuth' in s))
        .map(([method, op]) => ({ op: `${method} ${path}`, declared: op.responses['429']?.headers ?? null })),
    );
    expect(charged.length).toBeGreaterThanOrEqual(8);
    for (const { op, declared } of charged)
      expect({ op, declared }).toEqual({ op, declared: { 'Retry-After': expect.anything() } });
  });

  it('refuses a change of a link past its rate before its token is looked up; a read or another token goes on', () => {
    const changes = rate();
    const call = (method: string, token = 'psp_aaaa') => ({ method, headers: { authorization: `Bearer ${token}` } });
    // Not known yet: nothing to refuse before the lookup.
    expect(() => changes.refuseBeforeLookup(call('PATCH'))).not.toThrow();
    changes.charge('link-a', call('PATCH'));
    expect(() => changes.refuseBeforeLookup(call('PATCH'))).not.toThrow(); // one left
    changes.charge('link-a', call('PATCH'));
    const early = refusal(() => changes.refuseBeforeLookup(call('POST')));
    expect(early.problem).toMatchObject({ status: 429, reason: 'portal-link-change-rate', retryAfterSeconds: 2 });
    expect(() => changes.refuseBeforeLookup(call('GET'))).not.toThrow(); // reading is not limited
    expect(() => changes.refuseBeforeLookup(call('POST', 'psp_bbbb'))).not.toThrow(); // another link's token
    expect(() => changes.refuseBeforeLookup({ method: 'POST', headers: {} })).not.toThrow();
  });
});
