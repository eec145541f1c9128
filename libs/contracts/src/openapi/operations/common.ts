// What the operation files share: responses, parameters, and the security each operation lists.
import { MAX_PLANT_ID } from '../../plant-id';

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
export const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ref('Problem') } },
});
export const ok = (description: string, schema: unknown) => ({ description, ...json(schema) });
export const idParam = (name: string, schema: unknown, description: string) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema,
});
export const cursorParams = [
  { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 } },
  { name: 'cursor', in: 'query', description: 'The `nextCursor` of the previous page', schema: { type: 'string' } },
];
// OpenAPI 3.1 lets a bearer scheme list the roles an operation needs: `read` or `write` (ADMIN_TOKENS scopes).
export const adminRead = [{ adminAuth: ['read'] }];
export const adminWrite = [{ adminAuth: ['write'] }];
// The read API: a webhook token (the document's global bearerAuth) or any admin token.
export const storeRead = [{ bearerAuth: [] }, { adminAuth: [] }];
// Operations a portal link's token may also call, for its own subscription only (see the portalAuth scheme).
// The gateway reads this list from here: an operation without `portalAuth` answers a portal token 403.
export const adminReadOrPortal = [...adminRead, { portalAuth: [] }];
export const adminWriteOrPortal = [...adminWrite, { portalAuth: [] }];
export const unauthorized = problem(
  'Missing or wrong bearer token, or a portal link that expired, was revoked, or whose subscription was deleted or ' +
    'is operational (`detail` says which). A portal link token from an address whose portal tokens keep opening ' +
    'nothing is not looked up for a while (`reason`: `unknown-portal-tokens`, with Retry-After)',
);
export const forbidden = problem(
  'An admin token without the scope this operation needs (named in `detail`), or a portal link token used ' +
    'outside its own subscription',
);
export const notFound = problem('No such resource');
// Past a share (issue 36): 429 with Retry-After, the problem's `reason` naming the share.
export const tooMany = (description: string) => ({
  ...problem(description),
  headers: {
    'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 1 } },
  },
});
// Every operation a portal link may call that is not a read (the gateway charges them: portal-change-rate.ts).
export const PORTAL_CHANGE_RATE =
  "portal link's token past its rate of changes (PORTAL_LINK_CHANGES_BURST at once, then " +
  'PORTAL_LINK_CHANGES_PER_MINUTE, per link and gateway; `reason`: `portal-link-change-rate`): nothing was done';
export const portalChangeRate = tooMany(`A ${PORTAL_CHANGE_RATE}. Admin tokens are not limited.`);
export const plantIdSchema = {
  type: 'integer',
  format: 'int64',
  minimum: -MAX_PLANT_ID,
  maximum: MAX_PLANT_ID,
  description:
    'Any int64 the New Plant webhook accepts, within ±(2^53 - 1): a JSON number beyond that cannot be carried ' +
    'exactly, so the webhook refuses such ids with 422 rather than store a rounded one',
};
export const badParameter = problem(
  'A path or query parameter does not match its schema (each named in `errors`): a date that is no real instant ' +
    '(a leap second), an integer beyond ±(2^53 - 1), a cursor this API did not issue',
);
/** RFC 3339, and a real instant: a leap second (23:59:60) is refused with 422; fractions beyond ms are cut. */
export const instant = (description: string) => ({
  description,
  schema: {
    type: 'string',
    format: 'date-time',
    description: 'RFC 3339; a real instant (no leap second, 23:59:60); fractions beyond milliseconds are cut',
  },
});
export const subscriptionId = idParam('id', { type: 'string', format: 'uuid' }, 'Subscription id');
export const invalidBody = problem(
  'The body does not match its schema, or would not be stored as sent: a NUL or unpaired surrogate in any string ' +
    'or property name, a number a double cannot carry exactly (each field named in `errors`)',
);
