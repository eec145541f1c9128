import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { createMetricsRegistry, LATENCY_BUCKETS } from '@app/observability';

export class WorkerMetrics {
  readonly registry: Registry = createMetricsRegistry('worker');

  readonly events = new Counter({
    name: 'plant_store_events_total',
    help: 'plant.created events by outcome: stored, duplicate, unchanged (same data as stored: nothing sent), stale, dead_lettered',
    labelNames: ['outcome'],
    registers: [this.registry],
  });

  readonly failures = new Counter({
    name: 'plant_store_event_failures_total',
    help: 'Transient processing failures (each retried, none dropped)',
    labelNames: ['stage'],
    registers: [this.registry],
  });

  readonly processingLatency = new Histogram({
    name: 'plant_store_event_processing_seconds',
    help: 'From the gateway accepting an event (its CloudEvent time) to its plant being stored',
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly batchDuration = new Histogram({
    name: 'plant_store_batch_duration_seconds',
    help: 'Time to store and commit one fetched batch',
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly consumerLag = new Gauge({
    name: 'plant_store_consumer_lag',
    help: "Records of plant.created not yet committed by the worker group, per partition: the broker's high watermark minus the group's committed offset, sampled every 5 s (absent when the broker cannot be asked)",
    labelNames: ['topic', 'partition'],
    registers: [this.registry],
  });

  readonly deliveries = new Counter({
    name: 'plant_store_deliveries_total',
    help: 'Webhook delivery attempts by subscription and outcome: sent, succeeded, retried, failed',
    labelNames: ['subscription', 'outcome'],
    registers: [this.registry],
  });

  readonly deliveryLatency = new Histogram({
    name: 'plant_store_delivery_latency_seconds',
    help: 'From the gateway accepting an event to a subscriber acknowledging its delivery',
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly deliveriesPending = new Gauge({
    name: 'plant_store_deliveries_pending',
    help: 'Deliveries waiting to be sent or retried, sampled every 5 s (NaN while the database cannot be asked)',
    registers: [this.registry],
  });

  readonly loopsCut = new Counter({
    name: 'plant_store_loop_events_suppressed_total',
    help: 'Events stored but not delivered again because they had been through MAX_WEBHOOK_HOPS deliveries (a subscription loop)',
    registers: [this.registry],
  });
}
