// The operations Plant Store adds under `paths`: the read API (webhook tokens) and the admin API
// (ADMIN_TOKENS), one file per resource under ./operations/ (what they share in ./operations/common.ts).
// Schemas they use live in ./schemas.ts.
import { audit } from './operations/audit';
import { backfill, backfills, cancelBackfill } from './operations/backfills';
import {
  deadLetter,
  deadLetters,
  discardDeadLetter,
  discardDeadLetters,
  redriveDeadLetter,
  redriveDeadLetters,
} from './operations/dead-letters';
import { deliveries, delivery, recover, retryDeliveries, retryDelivery } from './operations/deliveries';
import { overview } from './operations/overview';
import { plant, plants } from './operations/plants';
import { portalLink, portalLinks, portalSession } from './operations/portal-links';
import { rotateSecret, subscription, subscriptions, subscriptionTest } from './operations/subscriptions';

/** Path by path, in the order the document lists them. */
export const operations: Record<string, unknown> = {
  '/plants': plants,
  '/plants/{id}': plant,
  '/subscriptions': subscriptions,
  '/subscriptions/{id}': subscription,
  '/subscriptions/{id}/rotate-secret': rotateSecret,
  '/subscriptions/{id}/test': subscriptionTest,
  '/subscriptions/{id}/portal-links': portalLinks,
  '/subscriptions/{id}/portal-links/{linkId}': portalLink,
  '/portal/session': portalSession,
  '/subscriptions/{id}/recover': recover,
  '/subscriptions/{id}/backfills': backfills,
  '/subscriptions/{id}/backfills/{backfillId}': backfill,
  '/subscriptions/{id}/backfills/{backfillId}/cancel': cancelBackfill,
  '/deliveries': deliveries,
  '/deliveries/retry': retryDeliveries,
  '/overview': overview,
  '/deliveries/{id}': delivery,
  '/deliveries/{id}/retry': retryDelivery,
  '/dead-letters': deadLetters,
  '/dead-letters/{id}': deadLetter,
  '/dead-letters/{id}/redrive': redriveDeadLetter,
  '/dead-letters/{id}/discard': discardDeadLetter,
  '/dead-letters/redrive': redriveDeadLetters,
  '/dead-letters/discard': discardDeadLetters,
  '/audit': audit,
};
