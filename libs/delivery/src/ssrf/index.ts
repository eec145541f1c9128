export * from './address-policy';
export * from './guarded-lookup';
export * from './subscriber-url';
