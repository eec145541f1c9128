export * from './kafka-options';
export * from './topics';
export * from './batching-publisher';
