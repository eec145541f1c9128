export * from './http-post';
export * from './webhook-client';
