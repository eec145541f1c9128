export * from './transport';
export * from './undici-post';
export * from './webhook-client';
