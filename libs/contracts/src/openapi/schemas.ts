// Schemas of the operations Plant Store adds, and of its operational webhooks, one file per resource under
// ./schemas/ (what they share in ./schemas/common.ts). The webhook's own schemas (Plant, NewPlant, Error) stay in
// ./seed.ts, untouched.
import { AuditEvent, AuditPage } from './schemas/audit';
import { Backfill, BackfillCreate } from './schemas/backfills';
import {
  DeadLetter,
  DeadLetterBulkResult,
  DeadLetterIds,
  DeadLetterPage,
  DeadLetterWithValue,
} from './schemas/dead-letters';
import {
  Delivery,
  DeliveryAttempt,
  DeliveryPage,
  DeliveryRetryFilter,
  DeliveryWithAttempts,
  Recovery,
  SentRequest,
} from './schemas/deliveries';
import { operationalEventSchemas } from './schemas/operational';
import { Overview } from './schemas/overview';
import { PlantPage, StoredPlant } from './schemas/plants';
import { PortalLink, PortalLinkCreate, PortalLinkWithToken, PortalSession } from './schemas/portal-links';
import { Problem } from './schemas/problems';
import { SubscriptionDestination, SubscriptionDestinationShown } from './schemas/destinations';
import {
  Subscription,
  SubscriptionCircuit,
  SubscriptionCreate,
  SubscriptionFilter,
  SubscriptionTest,
  SubscriptionTestResult,
  SubscriptionUpdate,
  SubscriptionWithSecret,
} from './schemas/subscriptions';

export { operationalExample } from './schemas/operational';

/** In the order the document lists them, after the seed's own. */
export const addedSchemas: Record<string, unknown> = {
  Problem,
  StoredPlant,
  PlantPage,
  SubscriptionCreate,
  SubscriptionUpdate,
  SubscriptionFilter,
  SubscriptionDestination,
  Subscription,
  SubscriptionDestinationShown,
  SubscriptionCircuit,
  SubscriptionWithSecret,
  Delivery,
  DeliveryAttempt,
  SentRequest,
  DeliveryWithAttempts,
  SubscriptionTest,
  SubscriptionTestResult,
  PortalLinkCreate,
  PortalLink,
  PortalLinkWithToken,
  PortalSession,
  DeliveryPage,
  Recovery,
  BackfillCreate,
  Backfill,
  AuditEvent,
  AuditPage,
  DeadLetter,
  DeadLetterWithValue,
  DeadLetterPage,
  DeliveryRetryFilter,
  Overview,
  DeadLetterIds,
  DeadLetterBulkResult,
  ...operationalEventSchemas(),
};
