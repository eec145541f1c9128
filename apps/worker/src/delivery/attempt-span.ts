import { ClaimedDelivery, DeliveryAttempt } from '@app/delivery';
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

/**
 * A delivery attempt as an HTTP CLIENT span (semantic conventions: name `POST`), child of the worker's span for
 * the event, so the attempts of every subscriber, retries included, sit in the sender's trace. The URL is
 * recorded without its query and credentials: a subscriber's URL may carry a token there, and no credential
 * goes to a collector.
 */
export function attemptSpan(tracing: Tracing, d: ClaimedDelivery): Span {
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
      ...(d.attempts > 0 ? { [ATTR_HTTP_REQUEST_RESEND_COUNT]: d.attempts } : {}),
      'plant_store.delivery.id': d.id,
      'plant_store.subscription.id': d.subscriptionId,
      'plant_store.event.id': d.eventId,
      'plant_store.plant.id': d.plantId,
    },
    d.traceparent,
  );
}

/** Client spans: any status of 400 or more is an error, and so is no answer (`error.type` the error's code). */
export function endAttemptSpan(span: Span, attempt: DeliveryAttempt): void {
  if (attempt.status !== null) {
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, attempt.status);
    if (attempt.status >= 400) failSpan(span, String(attempt.status));
  } else
    failSpan(
      span,
      attempt.error?.startsWith('refused by the SSRF guard') ? 'ssrf_refused' : (attempt.error ?? 'error'),
      attempt.error ?? undefined,
    );
  span.end();
}
