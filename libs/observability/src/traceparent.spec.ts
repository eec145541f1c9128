import { continueTrace } from './traceparent';

describe(continueTrace.name, () => {
  it('continues a valid incoming trace with a new span', () => {
    const incoming = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const ctx = continueTrace(incoming);
    expect(ctx.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(ctx.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
    expect(ctx.spanId).not.toBe('00f067aa0ba902b7');
  });

  it.each([undefined, 'garbage', '00-00000000000000000000000000000000-00f067aa0ba902b7-01'])(
    'starts a new trace for %p',
    (incoming) => {
      expect(continueTrace(incoming).traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    },
  );
});
