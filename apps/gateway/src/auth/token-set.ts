import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * A set of accepted bearer tokens. Several may be valid at once (rotation). Comparison is constant-time:
 * every candidate is hashed to a fixed length and all configured tokens are checked, match or not.
 */
export class TokenSet {
  private readonly digests: Buffer[];

  constructor(tokens: string[]) {
    this.digests = tokens.map(digest);
  }

  /** The index of the matching token (never the token itself, which must not reach logs), or -1. */
  match(candidate: string): number {
    const d = digest(candidate);
    let found = -1;
    this.digests.forEach((known, i) => {
      if (timingSafeEqual(known, d) && found === -1) found = i;
    });
    return found;
  }
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
