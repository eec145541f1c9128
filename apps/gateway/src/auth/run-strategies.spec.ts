import passport from 'passport';
import type { GatewayConfig } from '@app/config';
import { AdminBearerStrategy, WebhookBearerStrategy } from './bearer.strategies';
import { runStrategies } from './run-strategies';

// The real strategies (PassportStrategy over passport-http-bearer), registered with passport as the app does.
const config = {
  WEBHOOK_TOKENS: ['wh-token-1', 'wh-token-2'],
  ADMIN_TOKENS: [{ name: 'ops', scope: 'write', token: 'admin-token-1' }],
} as unknown as GatewayConfig;
new WebhookBearerStrategy(config);
new AdminBearerStrategy(config);

/** What passport.authenticate with a callback (as @nestjs/passport's AuthGuard calls it) hands over. */
function viaPassport(names: string[], headers: Record<string, string>) {
  return new Promise<{ user: unknown; info: unknown }>((resolve, reject) => {
    const names1 = names.length === 1 ? names[0] : names;
    passport.authenticate(names1, { session: false }, (err: unknown, user: unknown, info: unknown) =>
      err ? reject(err) : resolve({ user, info }),
    )({ headers }, {}, reject);
  });
}

const AUTHORIZATIONS: (string | undefined)[] = [
  undefined,
  '',
  'Bearer wh-token-1',
  'Bearer wh-token-2',
  'bearer wh-token-1',
  'BEARER admin-token-1',
  'Bearer admin-token-1',
  'Bearer wrong',
  'Bearer',
  'Bearer  wh-token-1',
  'Bearer wh-token-1 extra',
  'Basic d2g6dG9rZW4=',
  'wh-token-1',
];

describe('runStrategies: the route strategies, as passport.authenticate runs them', () => {
  for (const names of [['webhook-bearer'], ['admin-bearer'], ['webhook-bearer', 'admin-bearer']])
    it(`hands over what passport does, for ${names.join(' then ')}`, async () => {
      for (const authorization of AUTHORIZATIONS) {
        const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
        const ours = await runStrategies(names, { headers });
        const theirs = await viaPassport(names, headers);
        // passport hands a malformed header's fail(400) over as a status without a challenge.
        expect({ authorization, ...ours }).toEqual({ authorization, ...theirs });
      }
    });

  it('finds the principal of the first strategy that knows the token', async () => {
    const both = ['webhook-bearer', 'admin-bearer'];
    expect((await runStrategies(both, { headers: { authorization: 'Bearer admin-token-1' } })).user).toEqual({
      kind: 'admin',
      name: 'ops',
      scope: 'write',
    });
    expect((await runStrategies(['webhook-bearer'], { headers: { authorization: 'Bearer wh-token-2' } })).user).toEqual(
      { kind: 'webhook', name: 'webhook-2', scope: null },
    );
  });

  it('refuses a strategy passport does not know', async () => {
    await expect(runStrategies(['no-such'], { headers: {} })).rejects.toThrow('Unknown authentication strategy');
  });
});
