import type { IncomingHttpHeaders } from 'node:http';
import passport from 'passport';

/** What the route's strategies made of a request: the principal, or none and the challenge(s) they answered. */
export interface StrategyOutcome<User> {
  user: User | false;
  /** The challenge of the one strategy, or of each in order when there are several (as passport hands them over). */
  info: unknown;
}

interface StrategyActions<User> {
  authenticate(req: unknown, options: object): void;
  success(user: User): void;
  fail(challenge?: unknown, status?: number): void;
  error(err: unknown): void;
  redirect(): void;
  pass(): void;
}

const registered = passport as unknown as { _strategy(name: string): object | undefined };

/**
 * Runs Passport strategies registered by name (each a @nestjs/passport PassportStrategy over
 * passport-http-bearer) on a request, as passport.authenticate does with a callback: each in order until one
 * succeeds; when none does, no user and the failures' challenges. The strategies themselves do the work (finding
 * the token, checking it); this only replaces the per-request plumbing around them, AuthGuard's and passport's
 * (an options object spread three times, a middleware and its closures built per call, five promises),
 * which made a tenth of the gateway's garbage per webhook (npm run profile:allocations). No session, no
 * redirect: a bearer strategy has neither, and one that asked for them would be refused as an error.
 * run-strategies.spec.ts checks the outcomes against passport.authenticate's for the same requests.
 */
export function runStrategies<User>(
  names: readonly string[],
  req: { headers: IncomingHttpHeaders },
): Promise<StrategyOutcome<User>> {
  return new Promise((resolve, reject) => {
    const challenges: unknown[] = [];
    const attempt = (i: number): void => {
      if (i === names.length) return resolve({ user: false, info: names.length === 1 ? challenges[0] : challenges });
      const prototype = registered._strategy(names[i]);
      if (!prototype) return reject(new Error(`Unknown authentication strategy "${names[i]}"`));
      const strategy = Object.create(prototype) as StrategyActions<User>;
      strategy.success = (user) => resolve({ user, info: undefined });
      // passport: fail(400) is a status without a challenge.
      strategy.fail = (challenge) => {
        challenges.push(typeof challenge === 'number' ? undefined : challenge);
        attempt(i + 1);
      };
      strategy.error = reject;
      strategy.redirect = strategy.pass = () => reject(new Error(`Strategy "${names[i]}" redirected or passed`));
      strategy.authenticate(req, {});
    };
    attempt(0);
  });
}
