export * from './destination';
export * from './destination-url';
export * from './broker-client';
export * from './destination-client';
