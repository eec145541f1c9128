import { Injectable } from '@nestjs/common';

/** Set on SIGTERM so /readyz fails at once and the load balancer stops sending traffic while we drain. */
@Injectable()
export class ShutdownState {
  draining = false;
}
