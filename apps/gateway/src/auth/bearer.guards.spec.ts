import { CanActivate, Controller, Global, Module, Patch, Type, UseGuards } from '@nestjs/common';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { Test } from '@nestjs/testing';
import { APP_CONFIG } from '@app/config';
import { ProblemException } from '@app/observability';
import { AdminReadGuard, AdminWriteGuard } from './bearer.guards';
import type { Principal } from './bearer.strategies';
import { PortalChangeRate } from './portal-change-rate';

// The guards as Nest wires them (a feature module's controller, the rate from a global module, as AuthModule is),
// each request already authenticated (as the before-body hook leaves it), so no strategy runs.
@Global()
@Module({
  providers: [
    { provide: APP_CONFIG, useValue: { PORTAL_LINK_CHANGES_PER_MINUTE: 30, PORTAL_LINK_CHANGES_BURST: 2 } },
    PortalChangeRate,
  ],
  exports: [APP_CONFIG, PortalChangeRate],
})
class SharedModule {}

@UseGuards(AdminReadGuard)
@Controller('subscriptions')
class SubscriptionsStub {
  @Patch(':id')
  @UseGuards(AdminWriteGuard)
  update() {}
}

@Module({ controllers: [SubscriptionsStub] })
class FeatureModule {}

const portal: Principal = {
  kind: 'portal',
  name: 'portal-link:l1',
  scope: null,
  portal: { subscriptionId: 's1', linkId: 'l1', expiresAt: new Date(Date.now() + 3_600_000) },
};
const admin: Principal = { kind: 'admin', name: 'ops', scope: 'write' };

describe('the bearer guards and a portal link’s rate of changes', () => {
  let guards: CanActivate[];

  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [SharedModule, FeatureModule] }).compile();
    guards = [AdminReadGuard, AdminWriteGuard].map((g: Type<CanActivate>) => moduleRef.get(g, { strict: false }));
  });

  /** One request through the route's guards, as Nest runs them: its status, 200 when let through. */
  async function call(user: Principal, method = 'PATCH', id = 's1'): Promise<number> {
    const req = { method, url: `/subscriptions/${id}`, routeOptions: { url: '/subscriptions/:id' }, user };
    Object.assign(req, { params: { id }, query: {} });
    const context = new ExecutionContextHost([req, {}]);
    try {
      // Twice, as the before-body hook and then Nest run them: the request is charged once.
      for (let run = 0; run < 2; run++) for (const guard of guards) await guard.canActivate(context);
      return 200;
    } catch (err) {
      return (err as ProblemException).problem.status;
    }
  }

  it('charges each change of a link once, however many guards run, and refuses it past its burst', async () => {
    expect([await call(portal), await call(portal), await call(portal)]).toEqual([200, 200, 429]);
  });

  it('charges neither reads nor calls outside its scope (403), and never an admin token', async () => {
    for (let i = 0; i < 20; i++) {
      expect(await call(portal, 'HEAD')).toBe(200);
      expect(await call(portal, 'PATCH', 's2')).toBe(403);
      expect(await call(admin)).toBe(200);
    }
    expect([await call(portal), await call(portal), await call(portal)]).toEqual([200, 200, 429]);
    expect(await call(admin)).toBe(200); // the operator is not limited by what a link does
  });
});
