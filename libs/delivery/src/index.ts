// The delivery domain: its types and storage ports (domain/), what an attempt means (outcome), when to try
// again (retry-schedule), how a delivery is signed (signing), where it may go (ssrf/) and how it is sent (http/).
export * from './domain';
export * from './http';
export * from './outcome';
export * from './redaction';
export * from './retry-schedule';
export * from './signing';
export * from './ssrf';
