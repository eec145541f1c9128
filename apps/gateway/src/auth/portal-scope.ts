import { buildOpenApiDocument } from '@app/contracts';
import { ProblemException } from '@app/observability';
import type { Principal } from './bearer.strategies';

/**
 * What a portal link's token may reach, read from the served document: the operations whose `security` lists
 * `portalAuth` (as Fastify names their routes: `GET /subscriptions/:id`), and there only its own subscription.
 * The document is the one place that says it; an operation added without `portalAuth` is closed to portal links.
 */
const PORTAL_ROUTES: ReadonlySet<string> = (() => {
  const routes = new Set<string>();
  const paths = buildOpenApiDocument().paths as Record<string, Record<string, { security?: object[] }>>;
  for (const [path, item] of Object.entries(paths))
    for (const [method, op] of Object.entries(item))
      if (op.security?.some((s) => 'portalAuth' in s))
        routes.add(`${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`);
  return routes;
})();

/** The parts of a Fastify request the check reads: the route as registered, its path and query parameters. */
export interface RoutedRequest {
  method: string;
  url: string;
  routeOptions: { url?: string };
  params: unknown;
  query: unknown;
}

const ASK =
  'A portal link opens one subscription and its deliveries only; for anything else use an admin token ' +
  '(ADMIN_TOKENS), or ask the Plant Store operator.';

/** 403 for a portal-confined caller reaching outside its subscription: what it tried, what to do instead. */
const portalForbidden = (own: string, what: string) =>
  ProblemException.of('forbidden', `This portal link is for subscription ${own}: ${what}. ${ASK}`, {
    subscriptionId: own,
  } as never);

/**
 * Throws 403 unless the route is one a portal link may call and every subscription it names (the path's `id` of
 * /subscriptions/{id}…, a `subscriptionId` query) is the link's own. What the route finds by other ids (a
 * delivery, a body's subscriptionId) the handler checks with assertOwnSubscription.
 */
export function assertPortalMayCall(principal: Principal, req: RoutedRequest): void {
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  const route = req.routeOptions.url ?? '';
  const own = principal.portal!.subscriptionId;
  if (!PORTAL_ROUTES.has(`${method} ${route}`))
    throw portalForbidden(own, `${method} ${req.url.split('?')[0]} is not one of its pages`);
  const params = (req.params ?? {}) as Record<string, unknown>;
  if (route.startsWith('/subscriptions/:id') && String(params.id).toLowerCase() !== own)
    throw portalForbidden(own, `subscription ${String(params.id)} is another subscriber's`);
  const query = (req.query ?? {}) as Record<string, unknown>;
  if (query.subscriptionId !== undefined && String(query.subscriptionId).toLowerCase() !== own)
    throw portalForbidden(own, `subscription ${String(query.subscriptionId)} is another subscriber's`);
}

/** For a handler: the subscription the caller is confined to (a portal link's), or null for an admin token. */
export const confinedTo = (principal: Principal): string | null => principal.portal?.subscriptionId ?? null;

/** 403 when a portal-confined caller reaches a resource of another subscription (`what` names it). */
export function assertOwnSubscription(confined: string | null, subscriptionId: string | null, what: string) {
  if (confined !== null && subscriptionId?.toLowerCase() !== confined)
    throw portalForbidden(confined, `${what} belongs to another subscriber`);
}
