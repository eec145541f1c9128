import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { createMetricsRegistry, LATENCY_BUCKETS } from '@app/observability';

export class GatewayMetrics {
  readonly registry: Registry = createMetricsRegistry('gateway');

  readonly requests = new Counter({
    name: 'plant_store_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [this.registry],
  });

  readonly publishLatency = new Histogram({
    name: 'plant_store_publish_latency_seconds',
    help: 'From a webhook being valid to its publish outcome: acked, not_accepted (withdrawn before sending), unknown (sent, no answer in time)',
    labelNames: ['outcome'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly publishesInFlight = new Gauge({
    name: 'plant_store_publishes_in_flight',
    help: 'Events waiting for Kafka to acknowledge them',
    registers: [this.registry],
  });

  readonly produceBatchSize = new Histogram({
    name: 'plant_store_produce_batch_size',
    help: 'Records per produce request (webhooks coalesced into one Kafka request)',
    buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000],
    registers: [this.registry],
  });

  readonly publishesShed = new Counter({
    name: 'plant_store_webhooks_shed_total',
    help: 'Webhooks answered 503 at once because MAX_PUBLISHES_IN_FLIGHT were already waiting for Kafka',
    registers: [this.registry],
  });

  readonly connections = new Gauge({
    name: 'plant_store_http_connections',
    help: 'Open HTTP connections on the public port',
    registers: [this.registry],
  });

  readonly connectionsDropped = new Counter({
    name: 'plant_store_http_connections_dropped_total',
    help: 'Connections closed on arrival because HTTP_MAX_CONNECTIONS were open',
    registers: [this.registry],
  });

  readonly clientErrors = new Counter({
    name: 'plant_store_http_client_errors_total',
    help: 'Requests cut before routing: timeout (headers or body too slow), header_overflow, malformed',
    labelNames: ['kind'],
    registers: [this.registry],
  });
}
