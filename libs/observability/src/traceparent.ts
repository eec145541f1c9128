import { randomBytes } from 'node:crypto';

// W3C Trace Context: version-traceid-parentid-flags.
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export interface TraceContext {
  traceId: string;
  spanId: string;
  traceparent: string;
}

/** Continues the caller's trace when it sent a valid traceparent, else starts one; always a new span. */
export function continueTrace(incoming?: string | string[] | null): TraceContext {
  const match = typeof incoming === 'string' ? TRACEPARENT.exec(incoming.trim()) : null;
  const traceId = match && !/^0+$/.test(match[1]) ? match[1] : randomBytes(16).toString('hex');
  const flags = match ? match[3] : '01';
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-${flags}` };
}
