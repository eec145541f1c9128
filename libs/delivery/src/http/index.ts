export * from './oauth-tokens';
export * from './receiver-auth';
export * from './transport';
export * from './undici-post';
export * from './webhook-client';
