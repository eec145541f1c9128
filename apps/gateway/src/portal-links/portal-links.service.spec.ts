import { AuditRepository, PortalLinkRepository, SubscriptionRepository, SubscriptionRow } from '@app/persistence';
import { PortalLinksService } from './portal-links.service';

describe(PortalLinksService.name, () => {
  const create = jest.fn();
  const service = (kind: SubscriptionRow['kind'] | null) =>
    new PortalLinksService(
      { create } as unknown as PortalLinkRepository,
      {
        findById: async () => (kind ? ({ id: 's1', kind } as SubscriptionRow) : null),
      } as unknown as SubscriptionRepository,
      { record: jest.fn() } as unknown as AuditRepository,
    );

  it('makes no link for an operational subscription: 409 saying to manage it with an admin token', async () => {
    await expect(service('operational').create('s1', {}, 'https://ps.example', 'ops')).rejects.toMatchObject({
      problem: {
        status: 409,
        detail: expect.stringMatching(/^Subscription s1 is operational: .*admin token \(ADMIN_TOKENS\)/),
      },
    });
    expect(create).not.toHaveBeenCalled();
  });

  it('answers 404 for no subscription, before making anything', async () => {
    await expect(service(null).create('s1', {}, 'https://ps.example', 'ops')).rejects.toMatchObject({
      problem: { status: 404 },
    });
    expect(create).not.toHaveBeenCalled();
  });
});
