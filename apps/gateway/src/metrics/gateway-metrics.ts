import { Registry } from 'prom-client';
import { createMetricsRegistry, instruments, LATENCY_BUCKETS } from '@app/observability';

export class GatewayMetrics {
  readonly registry: Registry = createMetricsRegistry('gateway');
  private readonly m = instruments(this.registry);

  readonly requests = this.m.counter('plant_store_http_requests_total', 'HTTP requests by route and status', [
    'method',
    'route',
    'status',
  ]);

  readonly publishLatency = this.m.histogram(
    'plant_store_publish_latency_seconds',
    'From a webhook being valid to its publish outcome: acked, not_accepted (withdrawn before sending), ' +
      'unknown (sent, no answer in time)',
    LATENCY_BUCKETS,
    ['outcome'],
  );

  readonly publishesInFlight = this.m.gauge(
    'plant_store_publishes_in_flight',
    'Events waiting for Kafka to acknowledge them',
  );

  readonly produceBatchSize = this.m.histogram(
    'plant_store_produce_batch_size',
    'Records per produce request (webhooks coalesced into one Kafka request)',
    [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000],
  );

  readonly publishesShed = this.m.counter(
    'plant_store_webhooks_shed_total',
    'Webhooks answered 503 at once because MAX_PUBLISHES_IN_FLIGHT were already waiting for Kafka',
  );

  readonly connections = this.m.gauge('plant_store_http_connections', 'Open HTTP connections on the public port');

  readonly connectionsDropped = this.m.counter(
    'plant_store_http_connections_dropped_total',
    'Connections closed on arrival because HTTP_MAX_CONNECTIONS were open',
  );

  readonly clientErrors = this.m.counter(
    'plant_store_http_client_errors_total',
    'Requests cut before routing or auth: timeout (headers or body too slow), header_overflow, malformed, ambiguous_framing, http_version, chunk_too_large, unroutable (a path the router cannot decode)',
    ['kind'],
  );

  readonly bodiesRefused = this.m.counter(
    'plant_store_http_bodies_refused_total',
    'Requests answered 503 before their body was read, as it would pass a bound on the bytes of bodies held: ' +
      'budget (HTTP_BODY_BUDGET_BYTES, the whole process), sender_share (HTTP_BODY_SENDER_SHARE_BYTES, one sender)',
    ['reason'],
  );

  private limits = { publishesInFlight: 0, idempotencyKeys: 0 };
  private idempotencyKeyCount: () => number = () => 0;
  private bodyBudget: { held: number; limit: number } = { held: 0, limit: 0 };

  readonly publishesInFlightLimit = this.m.gauge(
    'plant_store_publishes_in_flight_limit',
    'The most events that may wait for Kafka at once (MAX_PUBLISHES_IN_FLIGHT); past it, webhooks get 503',
    [],
    (g) => g.set(this.limits.publishesInFlight),
  );

  readonly idempotencyKeys = this.m.gauge(
    'plant_store_idempotency_keys',
    "Senders' idempotency keys this replica remembers (a digest each), to refuse a key reused for another plant",
    [],
    (g) => g.set(this.idempotencyKeyCount()),
  );

  readonly idempotencyKeysLimit = this.m.gauge(
    'plant_store_idempotency_keys_limit',
    'The most idempotency keys a replica remembers; the oldest half is dropped when it is reached',
    [],
    (g) => g.set(this.limits.idempotencyKeys),
  );

  readonly bodyBytes = this.m.gauge(
    'plant_store_http_body_bytes',
    'Bytes reserved for request bodies being read (a Content-Length at once, any other body as it arrives)',
    [],
    (g) => g.set(this.bodyBudget.held),
  );

  readonly bodyBytesLimit = this.m.gauge(
    'plant_store_http_body_bytes_limit',
    "The most bytes of request bodies read at once (HTTP_BODY_BUDGET_BYTES); past it, or past a sender's share, 503",
    [],
    (g) => g.set(this.bodyBudget.limit),
  );

  /** The body budget, read when scraped (body-budget.ts). */
  watchBodyBudget(budget: { held: number; limit: number }) {
    this.bodyBudget = budget;
  }

  /** The in-memory bounds, so that each is read beside its limit. */
  watchBounds(publishesInFlight: number, idempotencyKeys: { limit: number; count: () => number }) {
    this.limits = { publishesInFlight, idempotencyKeys: idempotencyKeys.limit };
    this.idempotencyKeyCount = idempotencyKeys.count;
  }
}
