import { EventHeaders } from '@app/contracts';
import {
  ATTR_DB_COLLECTION_NAME,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_SYSTEM_NAME,
  ATTR_MESSAGING_CONSUMER_GROUP_NAME,
  ATTR_MESSAGING_DESTINATION_NAME,
  ATTR_MESSAGING_DESTINATION_PARTITION_ID,
  ATTR_MESSAGING_KAFKA_MESSAGE_KEY,
  ATTR_MESSAGING_KAFKA_OFFSET,
  ATTR_MESSAGING_MESSAGE_ID,
  ATTR_MESSAGING_OPERATION_NAME,
  ATTR_MESSAGING_OPERATION_TYPE,
  ATTR_MESSAGING_SYSTEM,
  failSpan,
  Span,
  SpanKind,
  Tracing,
} from '@app/observability';
import { BatchPlan, PoisonMessage } from './batch-plan';
import { headerString, IngestBatch } from './ingest-batch';

/**
 * The worker's spans for one batch: a CONSUMER `process plant.created` span per record, child of the gateway's
 * PRODUCER span (its traceparent header), and under it a CLIENT span for the database write that stored it.
 * Each stored event takes its span's traceparent into its deliveries, so every attempt joins the same trace.
 */
export class BatchSpans {
  private readonly spans = new Map<string, Span>(); // by offset
  private storeStarted = 0;

  constructor(
    private readonly tracing: Tracing,
    batch: IngestBatch,
    plan: BatchPlan,
    group: string,
  ) {
    for (const m of batch.messages) {
      const eventId = headerString(m.headers, EventHeaders.eventId);
      const span = tracing.startSpan(
        `process ${batch.topic}`,
        SpanKind.CONSUMER,
        {
          [ATTR_MESSAGING_SYSTEM]: 'kafka',
          [ATTR_MESSAGING_OPERATION_TYPE]: 'process',
          [ATTR_MESSAGING_OPERATION_NAME]: 'process',
          [ATTR_MESSAGING_DESTINATION_NAME]: batch.topic,
          [ATTR_MESSAGING_DESTINATION_PARTITION_ID]: String(batch.partition),
          [ATTR_MESSAGING_CONSUMER_GROUP_NAME]: group,
          [ATTR_MESSAGING_KAFKA_OFFSET]: Number(m.offset),
          ...(m.key ? { [ATTR_MESSAGING_KAFKA_MESSAGE_KEY]: m.key.toString() } : {}),
          ...(eventId ? { [ATTR_MESSAGING_MESSAGE_ID]: eventId } : {}),
        },
        headerString(m.headers, EventHeaders.traceparent),
      );
      this.spans.set(m.offset, span);
    }
    for (const event of plan.events) {
      const span = this.spans.get(event.offset);
      if (span) event.traceparent = this.tracing.traceparent(span) ?? event.traceparent;
    }
  }

  /** The batch's write is about to start (it may be shared with other partitions' batches). */
  storing(): void {
    this.storeStarted = Date.now();
  }

  /** One CLIENT span per stored event, timed as the statement that stored it; only when spans are kept. */
  stored(plan: BatchPlan): void {
    if (!this.tracing.enabled) return;
    const ended = Date.now();
    for (const event of plan.events) {
      const parent = this.spans.get(event.offset);
      if (!parent) continue;
      this.tracing
        .startSpan(
          'INSERT plants',
          SpanKind.CLIENT,
          {
            [ATTR_DB_SYSTEM_NAME]: 'postgresql',
            [ATTR_DB_OPERATION_NAME]: 'INSERT',
            [ATTR_DB_COLLECTION_NAME]: 'plants',
            'plant_store.plant.id': event.plantId,
          },
          parent,
          this.storeStarted,
        )
        .end(ended);
    }
  }

  /** Committed: every span ends; a record that became a dead letter says so. */
  committed(poison: PoisonMessage[]): void {
    for (const p of poison) {
      const span = this.spans.get(p.message.offset);
      if (span) failSpan(span, 'dead_lettered', p.reason);
    }
    this.endAll();
  }

  /** The partition was revoked or the consumer stopped before the commit: another consumer takes these. */
  abandoned(reason: string): void {
    for (const span of this.spans.values()) failSpan(span, 'abandoned', reason);
    this.endAll();
  }

  /** For the debug log: the ids that find this record's trace in a tracing backend. */
  traceOf(offset: string): { traceId: string; spanId: string } | undefined {
    return this.spans.get(offset)?.spanContext();
  }

  private endAll() {
    for (const span of this.spans.values()) span.end();
    this.spans.clear();
  }
}
