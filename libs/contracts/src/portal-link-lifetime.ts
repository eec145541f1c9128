/** A portal link's lifetime in seconds: what PortalLinkCreate accepts, and its default (7 days). */
export const PORTAL_LINK_LIFETIME = { min: 60, max: 30 * 86_400, default: 7 * 86_400 } as const;
