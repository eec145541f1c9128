export * from './openapi/seed';
export * from './openapi/document';
export * from './schema-registry';
export * from './new-plant';
export * from './plant-created.event';
export * from './admin-bodies';
export * from './parameters';
export * from './plant-digest';
export type * from './openapi/shapes';
