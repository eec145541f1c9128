export * from './logger';
export * from './problem';
export * from './problem.filter';
export * from './metrics';
export * from './shutdown';
export * from './flow-summary';
export * from './rate-limited-log';
export * from './tracing';
