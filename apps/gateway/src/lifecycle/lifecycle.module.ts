import { Module } from '@nestjs/common';
import { ShutdownState } from './shutdown-state';

/** The gateway's shutdown state: set by main.ts on SIGTERM, read by readiness and by every request. */
@Module({ providers: [ShutdownState], exports: [ShutdownState] })
export class LifecycleModule {}
