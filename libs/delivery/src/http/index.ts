export * from './http-post';
export * from './undici-post';
export * from './webhook-client';
