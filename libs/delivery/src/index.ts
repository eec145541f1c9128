// The delivery domain: its types and storage ports (domain/), what an attempt means (outcome), when to try
// again (retry-schedule), how a delivery is signed (signing) and where it may go (ssrf/).
export * from './domain';
export * from './outcome';
export * from './retry-schedule';
export * from './signing';
export * from './ssrf';
