export * from './delivery';
export * from './ingest';
export * from './ports';
export * from './subscribers';
