import './kafkajs-fixes'; // before anything else opens a connection
import './kafkajs-varints';
export * from './kafka-options';
export * from './topics';
export * from './batching-publisher';
export * from './key-partitioner';
export * from './ensure-topics';
export * from './kafka-logs';
export * from './consumer-lag';
export * from './kafka-errors';
export * from './oauth-bearer';
export * from './consumer-watchdog';
export * from './severable-consumer';
