export * from './env.schema';
export * from './load-config';
export * from './config.module';
export * from './duration';
export * from './describe';
export * from './known-examples';
export * from './env-reference';
export * from './kafka-env';
