import type { IncomingHttpHeaders } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { APP_CONFIG, GatewayConfig } from '@app/config';
import { ProblemException } from '@app/observability';
import { PORTAL_TOKEN_PREFIX, portalTokenDigest } from '@app/persistence';
import { TokenBuckets } from './token-buckets';
import { retryAfterSeconds } from '../http/retry-after';

/** The parts of a request the charge reads: its method, and the object itself (charged once). */
type Charged = { method: string };

/** Links whose token this gateway has seen charged, by the token's digest: bounded like the buckets. */
const MAX_KNOWN_TOKENS = 10_000;

/**
 * What a portal link may do that is not a read (change its subscription, send a test, rotate the secret, retry,
 * replay, backfill), at a rate per link (issue 36, "cache invalidation at will": 300 PATCHes from one link in
 * 1.6 s, each making every worker reload every subscription, and each an audit row). A token bucket per link:
 * PORTAL_LINK_CHANGES_BURST at once, then PORTAL_LINK_CHANGES_PER_MINUTE. Charged by the guards once they let the
 * call through, before its body is read, so a refusal costs nothing and changes nothing. Kept in each gateway:
 * behind n replicas a link gets up to n times the rate. Admin tokens are never charged: the operator is not
 * limited by what a subscriber does.
 */
@Injectable()
export class PortalChangeRate {
  private readonly buckets: TokenBuckets;
  /** The guards run more than once per request (before the body, then in Nest): the first charge counts. */
  private readonly charged = new WeakSet<Charged>();
  /** SHA-256 of a portal token (hex) → its link, learned when a call of it is charged (see refuseBeforeLookup). */
  private readonly linkOfToken = new LRUCache<string, string>({ max: MAX_KNOWN_TOKENS });

  constructor(
    @Inject(APP_CONFIG) config: Pick<GatewayConfig, 'PORTAL_LINK_CHANGES_PER_MINUTE' | 'PORTAL_LINK_CHANGES_BURST'>,
  ) {
    this.buckets = new TokenBuckets(config.PORTAL_LINK_CHANGES_PER_MINUTE, config.PORTAL_LINK_CHANGES_BURST);
  }

  /** Links remembered now (bounded: see TokenBuckets). */
  get links(): number {
    return this.buckets.size;
  }

  /** Throws 429 with Retry-After when `linkId` is past its rate. A read, and a request charged already, are free. */
  charge(linkId: string, req: Charged & { headers?: IncomingHttpHeaders }): void {
    if (isRead(req) || this.charged.has(req)) return;
    const token = portalToken(req.headers);
    if (token !== null) this.linkOfToken.set(tokenKey(token), linkId); // the least recently charged goes first
    const waitMs = this.buckets.take(linkId);
    if (waitMs === null) return void this.charged.add(req);
    throw tooManyChanges(retryAfterSeconds(waitMs), this.buckets);
  }

  /**
   * Before the token is looked up: a change by a link whose bucket is empty here is refused at once, with no
   * query. A link looping on changes past its rate cost a database lookup per refusal, and beside nine others at
   * 100 webhooks/s its ~1,000 refusals in 10 s doubled their p95 (npm run bench:noisy-neighbour). Only a token
   * charged before is known here; any other goes on to its lookup (401 if it is none).
   */
  refuseBeforeLookup(req: Charged & { headers: IncomingHttpHeaders }): void {
    if (isRead(req)) return;
    const token = portalToken(req.headers);
    const linkId = token === null ? undefined : this.linkOfToken.peek(tokenKey(token));
    const waitMs = linkId === undefined ? null : this.buckets.peek(linkId);
    if (waitMs !== null) throw tooManyChanges(retryAfterSeconds(waitMs), this.buckets);
  }
}

const isRead = (req: Charged) => req.method === 'GET' || req.method === 'HEAD';

/** The bearer token of the request when it is a portal link's (`psp_…`), else null. */
function portalToken(headers: IncomingHttpHeaders | undefined): string | null {
  const auth = headers?.authorization;
  if (typeof auth !== 'string' || !/^bearer /i.test(auth)) return null;
  const token = auth.slice(7).trim();
  return token.startsWith(PORTAL_TOKEN_PREFIX) ? token : null;
}

/** The digest the portal links' table keeps of a token, as text: how a token is a key of a map here. */
export const tokenKey = (token: string) => portalTokenDigest(token).toString('hex');

const tooManyChanges = (seconds: number, rate: { perMinute: number; burst: number }) =>
  ProblemException.of(
    'tooManyRequests',
    `This portal link has made its changes for now (${rate.burst} at once, then ${rate.perMinute} a minute): ` +
      `this one was not made. Retry in ${seconds} s (Retry-After); reading is not limited. Changes are bounded ` +
      "per link so that one subscriber's cannot cost the others (PORTAL_LINK_CHANGES_PER_MINUTE, " +
      'PORTAL_LINK_CHANGES_BURST): ask the Plant Store operator if you need more.',
    { reason: 'portal-link-change-rate', retryAfterSeconds: seconds } as never,
    { 'retry-after': String(seconds) },
  );
