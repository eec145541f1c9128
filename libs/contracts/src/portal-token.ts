/**
 * A portal link's bearer token: `psp_`, then 32 random bytes in base64url (43 characters). The OpenAPI document
 * declares it, the store makes it (`newPortalToken`), and the gateway looks up only a token of this shape: any
 * other was never issued, so refusing it needs no query (an unauthenticated request costs a 401 and nothing more).
 */
export const PORTAL_TOKEN_PATTERN = '^psp_[A-Za-z0-9_-]{43}$';

const SHAPE = new RegExp(PORTAL_TOKEN_PATTERN);

/** Whether `token` could be a portal link's: the one check made before its lookup. */
export const hasPortalTokenShape = (token: string): boolean => SHAPE.test(token);
