import { SpanKind, Tracing } from './tracing';

describe('Tracing without an endpoint (off)', () => {
  const tracing = Tracing.forApp('gateway', {});

  it('is off, and its spans record nothing', () => {
    expect(tracing.enabled).toBe(false);
    const span = tracing.startSpan('POST /plant/webhook', SpanKind.SERVER, { a: 1 });
    expect(span.isRecording()).toBe(false);
  });

  it('still carries a valid incoming trace on, with a span id of its own', () => {
    const incoming = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const span = tracing.startSpan('send', SpanKind.PRODUCER, {}, incoming);
    const next = tracing.traceparent(span)!;
    expect(next).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
    expect(next).not.toContain('00f067aa0ba902b7');
    // A child of that span continues the same trace again.
    expect(tracing.traceparent(tracing.startSpan('process', SpanKind.CONSUMER, {}, span))).toMatch(
      /^00-4bf92f3577b34da6a3ce929d0e0e4736-/,
    );
  });

  it("keeps the sender's sampling decision", () => {
    const span = tracing.startSpan('x', SpanKind.SERVER, {}, '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00');
    expect(tracing.traceparent(span)).toMatch(/-00$/);
  });

  it.each([undefined, 'garbage', '00-00000000000000000000000000000000-00f067aa0ba902b7-01'])(
    'starts a new trace for %p',
    (incoming) => {
      const next = tracing.traceparent(tracing.startSpan('x', SpanKind.SERVER, {}, incoming))!;
      expect(next).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      expect(next).not.toMatch(/^00-0{32}/);
    },
  );
});

describe('Tracing with an endpoint (on)', () => {
  it('records spans that continue the incoming trace', async () => {
    const tracing = Tracing.forApp('worker', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    expect(tracing.enabled).toBe(true);
    const span = tracing.startSpan('x', SpanKind.SERVER, {}, '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    expect(span.isRecording()).toBe(true);
    expect(span.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    span.end();
    // Nothing listens on port 9: the export fails, and shutdown still resolves.
    await expect(tracing.shutdown()).resolves.toBeUndefined();
  });
});
