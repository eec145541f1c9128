import { Controller, Get, Inject } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { ProblemException } from '@app/observability';
import { EVENT_PUBLISHER, EventPublisher } from '../plant-webhook/event-publisher';
import { ShutdownState } from '../lifecycle/shutdown-state';
import { INDEX } from '../openapi/docs';

@ApiExcludeController()
@Controller()
export class HealthController {
  constructor(
    @Inject(EVENT_PUBLISHER) private readonly publisher: EventPublisher,
    private readonly shutdown: ShutdownState,
  ) {}

  /** A person at the gateway's address: where the docs and the document are. */
  @Get()
  index() {
    return INDEX;
  }

  /** The process is alive. */
  @Get('healthz')
  live() {
    return { status: 'ok' };
  }

  /** Ready to take webhooks: the Kafka producer is connected, Kafka does not refuse it, and we are not draining. */
  @Get('readyz')
  ready() {
    if (this.shutdown.draining) throw ProblemException.of('unavailable', 'Shutting down');
    const why = this.publisher.notReady();
    if (why) throw ProblemException.of('unavailable', why);
    return { status: 'ready', kafka: 'connected' };
  }
}
