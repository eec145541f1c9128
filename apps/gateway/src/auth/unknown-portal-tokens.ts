import { Injectable } from '@nestjs/common';
import { ProblemException } from '@app/observability';
import { REALM } from './realm';
import { TokenBuckets } from './token-buckets';

/** Unknown portal tokens one address may present before it is refused without a lookup: at once, then a minute. */
export const UNKNOWN_PORTAL_TOKENS = { burst: 20, perMinute: 60 } as const;

/**
 * A well-formed portal token that no link has costs one indexed read before its 401 (bearer.strategies.ts), so a
 * sender cycling random tokens would spend the database's time that belongs to everyone. Each address gets
 * UNKNOWN_PORTAL_TOKENS of such misses; past them its portal tokens are not looked up until its bucket refills:
 * 401 (what an unauthenticated request costs, and what every operation declares) with Retry-After and
 * `reason: unknown-portal-tokens`. A token that opens a link never counts, so a link holder is refused only behind
 * an address that is guessing, and for a second at a time. Kept in each gateway, bounded in memory as TokenBuckets
 * are.
 */
@Injectable()
export class UnknownPortalTokens {
  private readonly misses = new TokenBuckets(UNKNOWN_PORTAL_TOKENS.perMinute, UNKNOWN_PORTAL_TOKENS.burst);

  /** Throws 401 when `address` has no misses left: called before the lookup, so a refusal costs no query. */
  refuseBeforeLookup(address: string): void {
    const waitMs = this.misses.peek(address);
    if (waitMs === null) return;
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    throw ProblemException.of(
      'unauthorized',
      `Too many portal link tokens that open nothing came from this address (${UNKNOWN_PORTAL_TOKENS.burst} at ` +
        `once, then ${UNKNOWN_PORTAL_TOKENS.perMinute} a minute): this one was not looked up. Retry in ${seconds} s ` +
        '(Retry-After) with the token of a link the Plant Store operator sent you.',
      { reason: 'unknown-portal-tokens', retryAfterSeconds: seconds } as never,
      { 'retry-after': String(seconds), 'www-authenticate': `Bearer realm="${REALM}"` },
    );
  }

  /** A token from `address` was looked up and no link has it. */
  missed(address: string): void {
    this.misses.take(address);
  }
}
