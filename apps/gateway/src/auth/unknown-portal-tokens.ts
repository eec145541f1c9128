import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { ProblemException } from '@app/observability';
import { tokenKey } from './portal-change-rate';
import { REALM } from './realm';
import { TokenBuckets } from './token-buckets';
import { retryAfterSeconds } from '../http/retry-after';

/** Unknown portal tokens one address may present before it is refused without a lookup: at once, then a minute. */
export const UNKNOWN_PORTAL_TOKENS = { burst: 20, perMinute: 60 } as const;

/** Tokens remembered as having opened a link on this gateway (their digests): bounded like the buckets. */
const MAX_OPENED_TOKENS = 10_000;

/**
 * A well-formed portal token that no link has costs one indexed read before its 401 (bearer.strategies.ts), so a
 * sender cycling random tokens would spend the database's time that belongs to everyone. Each address gets
 * UNKNOWN_PORTAL_TOKENS of such misses; past them its portal tokens are not looked up until its bucket refills:
 * 401 (what an unauthenticated request costs, and what every operation declares) with Retry-After and
 * `reason: unknown-portal-tokens`. A token that opens a link never counts, and one that has opened a link on this
 * gateway is looked up whatever its address's share: behind a proxy every sender has the proxy's address, and a
 * guesser there must not lock out the holders of real links (only a link's first use waits, while the guessing
 * goes on). Still looked up every time, so a revoked link is refused at once. Kept in each gateway, bounded in
 * memory as TokenBuckets are.
 */
@Injectable()
export class UnknownPortalTokens {
  private readonly misses = new TokenBuckets(UNKNOWN_PORTAL_TOKENS.perMinute, UNKNOWN_PORTAL_TOKENS.burst);
  /** SHA-256 (hex) of the tokens that opened a link here: these are always looked up. */
  private readonly opened = new LRUCache<string, true>({ max: MAX_OPENED_TOKENS });

  /**
   * Throws 401 when `address` has no misses left and `token` never opened a link here: called before the lookup,
   * so a refusal costs no query.
   */
  refuseBeforeLookup(address: string, token: string): void {
    if (this.opened.has(tokenKey(token))) return;
    const waitMs = this.misses.peek(address);
    if (waitMs === null) return;
    const seconds = retryAfterSeconds(waitMs);
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

  /** `token` was looked up and a link has it (live or not: a revoked link's holder is told so, not locked out). */
  found(token: string): void {
    this.opened.set(tokenKey(token), true);
  }
}
