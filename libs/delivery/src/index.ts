// The delivery domain: its types and storage ports (domain/), what an attempt means (outcome), when to try
// again (retry-schedule), how a delivery is signed (signing), the subscription's own headers (custom-headers), where it may go (ssrf/), how it is sent (http/)
// and what of a subscriber's credentials is never shown or kept (redaction).
export * from './custom-headers';
export * from './domain';
export * from './http';
export * from './outcome';
export * from './redaction';
export * from './retry-schedule';
export * from './signing';
export * from './ssrf';
export * from './flow-control';
export * from './destinations';
