import { Registry } from 'prom-client';
import { createMetricsRegistry, instruments, LATENCY_BUCKETS } from '@app/observability';

export class WorkerMetrics {
  readonly registry: Registry = createMetricsRegistry('worker');
  private readonly m = instruments(this.registry);

  readonly events = this.m.counter(
    'plant_store_events_total',
    'plant.created events by outcome: stored, duplicate, unchanged (same data as stored: nothing sent), stale, dead_lettered, key_reused (an event id that came before with another plant: not stored)',
    ['outcome'],
  );

  readonly failures = this.m.counter(
    'plant_store_event_failures_total',
    'Transient processing failures (each retried, none dropped)',
    ['stage'],
  );

  readonly processingLatency = this.m.histogram(
    'plant_store_event_processing_seconds',
    'From the gateway accepting an event (its CloudEvent time) to its plant being stored',
    LATENCY_BUCKETS,
  );

  readonly batchDuration = this.m.histogram(
    'plant_store_batch_duration_seconds',
    'Time to store and commit one fetched batch',
    LATENCY_BUCKETS,
  );

  readonly consumerLag = this.m.gauge(
    'plant_store_consumer_lag',
    "Records of plant.created not yet committed by the worker group, per partition: the broker's high watermark " +
      "minus the group's committed offset, sampled every 5 s (absent when the broker cannot be asked)",
    ['topic', 'partition'],
  );

  /** Forced rejoins so far, by consumer: kept by ConsumerState, read when scraped (see watchConsumers). */
  private rejoins: () => Map<string, number> = () => new Map();

  readonly forcedRejoins = this.m.counter(
    'plant_store_consumer_forced_rejoins_total',
    'Kafka consumers (ingest, dead-letter archive) this worker replaced because they made no progress for ' +
      'KAFKA_CONSUMER_STALL_MS: no fetch, heartbeat or batch, out of their group, or owned lag left unconsumed',
    ['consumer'],
    (c) => {
      c.reset();
      for (const [consumer, n] of this.rejoins()) c.inc({ consumer }, n);
    },
  );

  watchConsumers(rejoins: () => Map<string, number>) {
    this.rejoins = rejoins;
  }

  readonly deliveries = this.m.counter(
    'plant_store_deliveries_total',
    'Webhook delivery attempts by subscription, destination kind (http, kafka, amqp, nats, mqtt, redis, sqs) and ' +
      'outcome: sent, succeeded, retried, failed',
    ['subscription', 'kind', 'outcome'],
  );

  readonly judgedSlow = this.m.counter(
    'plant_store_subscribers_judged_slow_total',
    'Times a subscriber was judged slow (it kept its share of the window full through a whole hand-over wait and ' +
      'answered fewer than half its sending slots meanwhile, or its own maxDeliveriesPerSecond could not let it): ' +
      'its deliveries are then stored as rows for 30 s',
    ['subscription'],
  );

  readonly deliveryLatency = this.m.histogram(
    'plant_store_delivery_latency_seconds',
    'From the gateway accepting an event to a subscriber acknowledging its delivery',
    LATENCY_BUCKETS,
  );

  readonly deliveriesPending = this.m.gauge(
    'plant_store_deliveries_pending',
    'Delivery rows waiting to be sent or retried, sampled every 5 s (NaN while the database cannot be asked)',
  );
  readonly eventsToFanOut = this.m.gauge(
    'plant_store_outbox_events_pending',
    'Stored events not yet fanned out to their subscribers, sampled every 5 s (NaN while the database cannot be asked)',
  );

  readonly subscriptionReloads = this.m.counter(
    'plant_store_subscription_reloads_total',
    'Reloads of the subscriptions held in memory after a change: of the changed ones alone, or of all (the first ' +
      'load, or a copy older than the change log)',
    ['scope'],
  );

  readonly loopsCut = this.m.counter(
    'plant_store_loop_events_suppressed_total',
    'Events stored but not delivered again because they had been through MAX_WEBHOOK_HOPS deliveries ' +
      '(a subscription loop)',
  );

  readonly pruned = this.m.counter(
    'plant_store_pruned_rows_total',
    'Rows deleted by retention, per table: processed event ids past PROCESSED_EVENTS_RETENTION, finished ' +
      'mutable deliveries past DELIVERY_RETENTION (the delivery log goes by partitions)',
    ['table'],
  );

  readonly prunedPartitions = this.m.counter(
    'plant_store_pruned_partitions_total',
    'Partitions dropped by retention, per table: days of the delivery log past DELIVERY_RETENTION',
    ['table'],
  );

  /** Each subscriber's circuit as this replica last read it (see SubscriberGates.circuits). */
  private circuits: () => Map<string, 'closed' | 'open' | 'half_open'> = () => new Map();

  readonly circuitState = this.m.gauge(
    'plant_store_subscription_circuit_state',
    "Each subscriber's circuit breaker: 1 for its state (closed, open, half_open), 0 for the others; read from the " +
      'database every second (every replica reports the same). A subscriber never failing is absent',
    ['subscription', 'state'],
    (g) => {
      g.reset();
      for (const [subscription, current] of this.circuits())
        for (const state of ['closed', 'open', 'half_open']) g.set({ subscription, state }, state === current ? 1 : 0);
    },
  );

  readonly pausedSubscribers = this.m.gauge(
    'plant_store_subscriptions_paused',
    'Subscribers paused now by their own 429 or 503 with Retry-After, as this replica knows them',
    [],
    (g) => g.set(this.paused()),
  );
  private paused: () => number = () => 0;

  watchSubscribers(circuits: () => Map<string, 'closed' | 'open' | 'half_open'>, paused: () => number) {
    this.circuits = circuits;
    this.paused = paused;
  }

  /** What the delivery dispatcher holds in memory, read when scraped (see DeliveryDispatcher.holding). */
  private dispatcherHolding: () => Record<'sending' | 'queued' | 'recording', number> = () => ({
    sending: 0,
    queued: 0,
    recording: 0,
  });
  private dispatcherWindow = 0;

  readonly dispatcherDeliveries = this.m.gauge(
    'plant_store_dispatcher_deliveries',
    'Deliveries the dispatcher holds in memory, by state: sending (on the wire), queued (waiting for a slot), ' +
      'recording (answered, outcome being written). Their sum never exceeds plant_store_dispatcher_window.',
    ['state'],
    (g) => {
      for (const [state, n] of Object.entries(this.dispatcherHolding())) g.set({ state }, n);
    },
  );

  readonly dispatcherWindowGauge = this.m.gauge(
    'plant_store_dispatcher_window',
    'The most deliveries the dispatcher holds in memory at once (2 x DELIVERY_CONCURRENCY)',
    [],
    (g) => g.set(this.dispatcherWindow),
  );

  watchDispatcher(window: number, holding: () => Record<'sending' | 'queued' | 'recording', number>) {
    this.dispatcherWindow = window;
    this.dispatcherHolding = holding;
  }
}
