export * from './tracing';
export * from './semconv';
export * from './tracing.module';
