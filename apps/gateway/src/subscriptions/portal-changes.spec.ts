import { SubscriptionRow } from '@app/persistence';
import { assertPortalMayChange, operatorDisabled } from './portal-changes';

const row = (over: Partial<SubscriptionRow> = {}) =>
  ({
    id: 'a1',
    enabled: false,
    disabled_reason: 'disabled by an admin',
    disabled_by_operator: true,
    ...over,
  }) as SubscriptionRow;

describe('what a portal link may change', () => {
  it('leaves the filter to the operator: 403 naming it', () => {
    expect(() => assertPortalMayChange({ filter: { tags: ['x'] } })).toThrow(
      expect.objectContaining({
        problem: expect.objectContaining({ status: 403, errors: [expect.objectContaining({ field: 'filter' })] }),
      }),
    );
    expect(() =>
      assertPortalMayChange({ description: 'mine', enabled: true, url: 'https://r.example/' }),
    ).not.toThrow();
  });

  it("answers its enable of the operator's disable with 409 saying why and what to do", () => {
    const { problem } = operatorDisabled(row());
    expect(problem).toMatchObject({
      status: 409,
      type: 'https://plant.store/problems/conflict',
      errors: [{ field: 'enabled', message: expect.stringContaining('operator') }],
    });
    expect(problem.detail).toMatch(
      /^Subscription a1 was disabled by the Plant Store operator \(disabled by an admin\): .*Ask the operator to enable it/,
    );
  });
});
