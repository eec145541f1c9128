import { DynamicModule, Module } from '@nestjs/common';

export const APP_CONFIG = Symbol('APP_CONFIG');
/** Which app this is ("gateway", "worker"): names its database connections and its logs. */
export const APP_NAME = Symbol('APP_NAME');

/**
 * The configuration, parsed and validated once by the app's entry (`createGatewayApp`, `createWorkerApp`)
 * before Nest starts, provided as it is. The one global module of each app: every feature reads its settings,
 * as with @nestjs/config's `isGlobal`; everything else is imported where it is used.
 */
@Module({})
export class ConfigModule {
  static withConfig(config: object, app: string): DynamicModule {
    return {
      module: ConfigModule,
      global: true,
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: APP_NAME, useValue: app },
      ],
      exports: [APP_CONFIG, APP_NAME],
    };
  }
}
