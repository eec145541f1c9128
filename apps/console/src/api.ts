// The admin API, through the typed client generated from /openapi.json (libs/api-client), called with the
// operator's token (or, in portal mode, a portal link's), kept for this tab only (sessionStorage): no cookie, no session the API would have to trust,
// no new privileged path.
import { createPlantStoreClient } from '@app/api-client';

export { ApiError, ok, OPERATIONAL_EVENT_TYPES, type Schema } from '@app/api-client';

/**
 * Portal mode: the console at /console/portal, opened by a subscriber's portal link, showing that one
 * subscription. Its token is a portal link's, kept apart from an admin's (a tab holds one or the other).
 */
export const PORTAL =
  window.location.pathname === '/console/portal' || window.location.pathname.startsWith('/console/portal/');

const KEY = PORTAL ? 'plant-store-portal-token' : 'plant-store-admin-token';

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (t: string) => sessionStorage.setItem(KEY, t),
  clear: () => sessionStorage.removeItem(KEY),
};

/** Same origin as the page: the gateway serves both. */
export const client = createPlantStoreClient('', token.get);

/** A query string of the values that are set, for links within the console. */
export const query = (q: Record<string, string | undefined>) => {
  const s = new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => Boolean(e[1]))).toString();
  return s ? `?${s}` : '';
};
