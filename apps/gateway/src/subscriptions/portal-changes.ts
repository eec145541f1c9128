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
