import type { Schema } from './openapi/shapes';

/**
 * Plant Store's own events, sent to operational subscriptions (`kind: "operational"`) as Standard Webhooks with
 * the body `{type, timestamp, data}`. Each is documented in the served document's `webhooks` (see
 * ./openapi/document.ts), its `data` a schema of ./openapi/schemas.ts.
 */
export const OPERATIONAL_EVENT_TYPES = [
  'subscription.disabled',
  'subscription.circuit_opened',
  'subscription.circuit_closed',
  'delivery.exhausted',
  'dead_letter.created',
] as const;

export type OperationalEventType = (typeof OPERATIONAL_EVENT_TYPES)[number];

/** Each type's `data`, as the document's schemas say. */
export interface OperationalEventData {
  'subscription.disabled': Schema<'SubscriptionDisabledData'>;
  'subscription.circuit_opened': Schema<'SubscriptionCircuitOpenedData'>;
  'subscription.circuit_closed': Schema<'SubscriptionCircuitClosedData'>;
  'delivery.exhausted': Schema<'DeliveryExhaustedData'>;
  'dead_letter.created': Schema<'DeadLetterCreatedData'>;
}

/** The schema names of each type's whole body and of its `data` (the document's components). */
export const operationalSchemaNames = (type: OperationalEventType) => {
  const name = type
    .split(/[._]/)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');
  return { event: `${name}Event`, data: `${name}Data` };
};
