export * from './database';
export * from './migrations';
export * from './migrate';
export * from './cursor';
export * from './plant.repository';
export * from './database.module';
export * from './subscription.repository';
export * from './delivery.repository';
