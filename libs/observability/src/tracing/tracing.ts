import { randomFillSync } from 'node:crypto';
import {
  Attributes,
  Context,
  ROOT_CONTEXT,
  Span,
  SpanKind,
  SpanStatusCode,
  TimeInput,
  trace,
  TraceFlags,
  Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from './semconv';

export { SpanKind, SpanStatusCode };
export type { Attributes, Span };

export interface TracingOptions {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL; spans go to `<endpoint>/v1/traces` (OTLP/HTTP, JSON). */
  endpoint?: string;
  /** OTEL_SERVICE_NAME, else `plant-store-<app>`. */
  serviceName: string;
  serviceVersion?: string;
}

/** Where a span's parent comes from: another span of ours, or a W3C `traceparent` header from outside. */
export type Parent = Span | string | null | undefined;

const propagator = new W3CTraceContextPropagator();
const headerGetter = {
  get: (carrier: Record<string, string>, key: string) => carrier[key],
  keys: (carrier: Record<string, string>) => Object.keys(carrier),
};

/**
 * OpenTelemetry spans for one app, with explicit parents (no context manager, no monkey-patching: the spans
 * are the ones this service chose to make, each where its work happens).
 *
 * Without an endpoint the spans are non-recording: nothing is timed, kept or sent, and a span only carries its
 * trace on, with a span id of its own, so `traceparent` still goes from sender to Kafka to subscriber and the
 * logs' trace ids still join up. That costs one random id per span.
 *
 * Each app has its own instance (not the global provider): the end-to-end tests run both apps in one process,
 * and each must report as itself.
 */
export class Tracing {
  private readonly tracer: Tracer | null;

  private constructor(private readonly provider: BasicTracerProvider | null) {
    this.tracer = provider?.getTracer('plant-store') ?? null;
  }

  static start(options: TracingOptions): Tracing {
    if (!options.endpoint) return new Tracing(null);
    const exporter = new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/+$/, '')}/v1/traces` });
    return new Tracing(
      new BasicTracerProvider({
        resource: resourceFromAttributes({
          [ATTR_SERVICE_NAME]: options.serviceName,
          ...(options.serviceVersion ? { [ATTR_SERVICE_VERSION]: options.serviceVersion } : {}),
        }),
        // Batched, with a bounded queue: a collector that is down drops spans, never blocks or grows memory.
        spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: 2048, scheduledDelayMillis: 1000 })],
      }),
    );
  }

  /** From the app's validated configuration: off unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  static forApp(app: string, config: { OTEL_EXPORTER_OTLP_ENDPOINT?: string; OTEL_SERVICE_NAME?: string }): Tracing {
    return Tracing.start({
      endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
      serviceName: config.OTEL_SERVICE_NAME ?? `plant-store-${app}`,
      serviceVersion: process.env.npm_package_version,
    });
  }

  static disabled(): Tracing {
    return new Tracing(null);
  }

  get enabled(): boolean {
    return this.tracer !== null;
  }

  startSpan(name: string, kind: SpanKind, attributes: Attributes, parent?: Parent, startTime?: TimeInput): Span {
    if (!this.tracer) return childOf(parent);
    return this.tracer.startSpan(name, { kind, attributes, startTime }, parentContext(parent));
  }

  /** The W3C `traceparent` that makes the next hop a child of `span`. */
  traceparent(span: Span): string | undefined {
    if (!this.tracer) {
      const c = span.spanContext();
      return `00-${c.traceId}-${c.spanId}-${c.traceFlags & TraceFlags.SAMPLED ? '01' : '00'}`;
    }
    const carrier: Record<string, string> = {};
    propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, {
      set: (c: Record<string, string>, k: string, v: string) => (c[k] = v),
    });
    return carrier.traceparent;
  }

  /**
   * Sends what is buffered, so that the drain's last spans are not lost. A collector that is down loses them;
   * it never fails or holds up the shutdown (the exporter's own timeout bounds the wait).
   */
  async shutdown(): Promise<void> {
    await this.provider?.shutdown().catch(() => undefined);
  }

  async flush(): Promise<void> {
    await this.provider?.forceFlush();
  }
}

/** Marks a span failed the way the conventions ask: status ERROR, and `error.type` (a class, not a message). */
export function failSpan(span: Span, errorType: string, message?: string): void {
  span.setAttribute(ATTR_ERROR_TYPE, errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

function parentContext(parent: Parent): Context {
  if (!parent) return ROOT_CONTEXT;
  if (typeof parent !== 'string') return trace.setSpan(ROOT_CONTEXT, parent);
  // A malformed header is ignored, and the span starts a trace of its own.
  return propagator.extract(ROOT_CONTEXT, { traceparent: parent.trim() }, headerGetter);
}

// Tracing off is on the hot path of every webhook, event and delivery attempt, so it avoids the propagator
// and a crypto call per id (~5 µs each here): ids come from a pooled random buffer (trace ids need to be
// unique, not secret), and a header is parsed with one expression. About 1 µs a span, measured.
const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-([\da-f]{16})-([\da-f]{2})(?:-|$)/;
const ZEROS = /^0+$/;

/** Tracing off: a non-recording span continuing the parent's trace (or a new one) with a span id of its own. */
function childOf(parent: Parent): Span {
  let traceId: string | undefined;
  let traceFlags = TraceFlags.SAMPLED;
  if (typeof parent === 'string') {
    const m = TRACEPARENT.exec(parent.trim());
    if (m && !m[0].startsWith('ff') && !ZEROS.test(m[1]) && !ZEROS.test(m[2])) {
      traceId = m[1];
      traceFlags = parseInt(m[3], 16) & TraceFlags.SAMPLED;
    }
  } else if (parent) {
    ({ traceId, traceFlags } = parent.spanContext());
  }
  return trace.wrapSpanContext({ traceId: traceId ?? randomHex(16), spanId: randomHex(8), traceFlags });
}

const pool = Buffer.alloc(4096);
let used = pool.length;
function randomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += bytes;
  return pool.toString('hex', used - bytes, used);
}
