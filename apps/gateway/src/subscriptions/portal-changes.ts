// What a portal link may change of its own subscription, in one place: what the operator set for it stays the
// operator's (issue 36, "what a portal link may change is what the operator allowed"). Every other rule of a change
// applies to a portal link's as to an admin's.
import { SubscriptionUpdateBody } from '@app/contracts';
import { ProblemException } from '@app/observability';
import { SubscriptionRow } from '@app/persistence';

/** 403 for what only the operator sets: which plants the subscription is sent (`filter`). */
export function assertPortalMayChange(body: SubscriptionUpdateBody): void {
  if (body.filter !== undefined)
    throw ProblemException.of(
      'forbidden',
      'filter: which plants this subscription is sent is set by the Plant Store operator, not through a portal ' +
        'link; ask the operator to change it (url, token, description and enabled may be changed here)',
      { errors: [{ field: 'filter', message: 'cannot be changed through a portal link' }] },
    );
}

/**
 * 409 for a portal link's enable of a subscription the operator disabled (disabled_by_operator): the statement
 * changed nothing, and only an admin enables it again.
 */
export const operatorDisabled = (row: SubscriptionRow) =>
  ProblemException.of(
    'conflict',
    `Subscription ${row.id} was disabled by the Plant Store operator` +
      `${row.disabled_reason ? ` (${row.disabled_reason})` : ''}: a portal link cannot enable it again. Ask the ` +
      'operator to enable it; its URL, token and description may still be changed here, and a test sent.',
    {
      errors: [{ field: 'enabled', message: 'cannot be set through a portal link while the operator has it disabled' }],
    },
  );

/** The operator's credentials a portal link's change of the URL leaves behind, for the audit trail. */
export interface LeftBehind {
  token: boolean;
  secretHeaders: string[];
}

/**
 * A portal link's change of the URL (to another one): the operator's secret headers and token were given for the
 * URL the operator set, and whoever holds the link must not have them sent to a host of its choosing. They stay
 * behind, all of them: only what the same change sets (a token, a secret header: the holder's own) goes with the
 * new URL. Null when the change keeps the URL. Plain headers go on: the link shows them anyway.
 */
export function leftBehindByPortal(current: SubscriptionRow, body: SubscriptionUpdateBody): LeftBehind | null {
  if (body.url === undefined || body.url === current.url) return null;
  return {
    token: current.token !== null && body.token === undefined,
    secretHeaders: Object.keys(current.secret_headers).sort(),
  };
}
