export * from './ssrf';
export * from './signing';
export * from './retry-schedule';
