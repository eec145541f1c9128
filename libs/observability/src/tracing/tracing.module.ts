import { DynamicModule, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { Tracing } from './tracing';

@Injectable()
class TracingShutdown implements OnApplicationShutdown {
  constructor(@Inject(Tracing) private readonly tracing: Tracing) {}

  /** After the app's own shutdown hooks: the drain's last spans are sent too. */
  async onApplicationShutdown() {
    await this.tracing.shutdown();
  }
}

/** The app's Tracing, made before Nest (the HTTP server's hooks use it) and provided as it is. */
@Module({})
export class TracingModule {
  static forRoot(tracing: Tracing): DynamicModule {
    return {
      module: TracingModule,
      global: true,
      providers: [{ provide: Tracing, useValue: tracing }, TracingShutdown],
      exports: [Tracing],
    };
  }
}
