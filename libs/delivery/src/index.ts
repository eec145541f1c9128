export * from './ssrf-guard';
export * from './signing';
export * from './retry-schedule';
