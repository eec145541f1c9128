import { DynamicModule, Module } from '@nestjs/common';
import { z } from 'zod';
import { loadConfig } from './load-config';

export const APP_CONFIG = Symbol('APP_CONFIG');

@Module({})
export class ConfigModule {
  /** Validates the environment when the module is built, so a bad variable fails before any I/O. */
  static forRoot(schema: z.ZodObject, env: NodeJS.ProcessEnv = process.env): DynamicModule {
    return ConfigModule.withConfig(loadConfig(schema, env));
  }

  /** Configuration the caller already validated (once, at start-up). */
  static withConfig(config: object): DynamicModule {
    return {
      module: ConfigModule,
      global: true,
      providers: [{ provide: APP_CONFIG, useValue: config }],
      exports: [APP_CONFIG],
    };
  }
}
