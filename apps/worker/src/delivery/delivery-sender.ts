import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, WorkerConfig } from '@app/config';
import { ClaimedDelivery, DestinationClient, SendResult } from '@app/delivery';
import { Tracing } from '@app/observability';
import { attemptSpan, endAttemptSpan } from './attempt-span';

export type { SendResult } from '@app/delivery';

/**
 * One attempt of a delivery, as a span of the event's trace, wherever its URL says (DestinationClient: an HTTP
 * receiver or a broker).
 */
@Injectable()
export class DeliverySender implements OnApplicationShutdown {
  private readonly client: DestinationClient;

  constructor(
    @Inject(APP_CONFIG) config: WorkerConfig,
    private readonly tracing: Tracing,
  ) {
    this.client = new DestinationClient({
      allowPrivateNetworks: config.DELIVERY_ALLOW_PRIVATE_NETWORKS,
      timeoutMs: config.DELIVERY_TIMEOUT_MS,
      maxConnections: config.DESTINATION_MAX_CONNECTIONS,
      idleMs: config.DESTINATION_IDLE_MS,
      // Under the breaker's first probe interval: a probe must find the broker's backoff over and really try it.
      // Longer (it was up to 60 s, doubling), a broker back after a 30 s outage had its probes refused unsent,
      // each doubling the next probe's wait: recovered after 80 s instead of 10 (the fault suite's redis cut).
      reconnectMaxMs: Math.max(1_000, Math.floor(config.DELIVERY_CIRCUIT_PROBE_MIN / 2)),
    });
  }

  async send(d: ClaimedDelivery): Promise<SendResult> {
    const span = attemptSpan(this.tracing, d);
    const result = await this.client.send({
      url: d.url,
      messageId: d.eventId,
      body: d.body,
      secrets: d.secrets,
      token: d.token,
      headers: d.headers,
      secretHeaders: d.secretHeaders,
      plantId: d.plantId,
      destination: d.destination,
      subscriptionId: d.subscriptionId,
      backfillId: d.backfillId,
      hops: d.hops,
      originEventId: d.originEventId,
      traceparent: this.tracing.traceparent(span),
    });
    endAttemptSpan(span, result);
    return result;
  }

  /** After the dispatcher's onModuleDestroy has drained the sends under way. */
  async onApplicationShutdown() {
    await this.client.close();
  }
}
