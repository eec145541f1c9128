import { BrokerKind, ClaimedDelivery, DeliveryAttempt, destinationKindOf, parseBrokerUrl } from '@app/delivery';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_RESEND_COUNT,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
  failSpan,
  Span,
  SpanKind,
  Tracing,
} from '@app/observability';

/** OpenTelemetry's `messaging.system` of each broker kind. */
const MESSAGING_SYSTEM: Record<BrokerKind, string> = {
  kafka: 'kafka',
  amqp: 'rabbitmq',
  nats: 'nats',
  mqtt: 'mqtt',
  redis: 'redis',
  sqs: 'aws_sqs',
};

/**
 * A delivery attempt as a span, child of the worker's span for the event, so the attempts of every subscriber,
 * retries included, sit in the sender's trace: an HTTP CLIENT span (name `POST`) for a receiver, a PRODUCER span
 * (`send <topic>`, the messaging conventions) for a broker. The URL is recorded without its query and
 * credentials: a subscriber's URL may carry a token there, and no credential goes to a collector.
 */
export function attemptSpan(tracing: Tracing, d: ClaimedDelivery): Span {
  // Without a collector the span only carries the trace on: its attributes would be built to be dropped, and
  // this runs once per delivery.
  if (!tracing.enabled) return tracing.startSpan('POST', SpanKind.CLIENT, {}, d.traceparent);
  const kind = destinationKindOf(d.url);
  const common = {
    ...(d.attempts > 0 ? { [ATTR_HTTP_REQUEST_RESEND_COUNT]: d.attempts } : {}),
    'plant_store.destination.kind': kind,
    'plant_store.delivery.id': d.id,
    'plant_store.subscription.id': d.subscriptionId,
    'plant_store.event.id': d.eventId,
    'plant_store.plant.id': d.plantId,
  };
  if (kind !== 'http') {
    const target = parseBrokerUrl(d.url);
    const where = target.ok ? target.value : null;
    return tracing.startSpan(
      `send ${where?.path ?? kind}`,
      SpanKind.PRODUCER,
      {
        'messaging.system': MESSAGING_SYSTEM[kind],
        'messaging.operation.type': 'send',
        'messaging.message.id': d.eventId,
        ...(where
          ? {
              'messaging.destination.name': where.path,
              [ATTR_SERVER_ADDRESS]: where.hosts[0].host,
              [ATTR_SERVER_PORT]: where.hosts[0].port,
            }
          : {}),
        ...common,
      },
      d.traceparent,
    );
  }
  let target: URL | null = null;
  try {
    target = new URL(d.url);
  } catch {
    // The sender refuses it and says why; the span still records the attempt.
  }
  return tracing.startSpan(
    'POST',
    SpanKind.CLIENT,
    {
      [ATTR_HTTP_REQUEST_METHOD]: 'POST',
      ...(target
        ? {
            [ATTR_URL_FULL]: `${target.protocol}//${target.host}${target.pathname}`,
            [ATTR_SERVER_ADDRESS]: target.hostname,
            [ATTR_SERVER_PORT]: Number(target.port) || (target.protocol === 'https:' ? 443 : 80),
          }
        : {}),
      ...common,
    },
    d.traceparent,
  );
}

/**
 * Any status of 400 or more is an error, and so is no answer (`error.type` the error's code); a broker's attempt
 * has no status, and no error is its yes.
 */
export function endAttemptSpan(span: Span, attempt: DeliveryAttempt): void {
  if (attempt.status !== null) {
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, attempt.status);
    if (attempt.status >= 400) failSpan(span, String(attempt.status));
  } else if (attempt.error !== null)
    failSpan(
      span,
      attempt.error.startsWith('refused by the SSRF guard') ? 'ssrf_refused' : attempt.error,
      attempt.error,
    );
  span.end();
}
