import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, WorkerConfig } from '@app/config';
import { SubscriberHealthRepository } from '@app/persistence';

/** How often the cap is checked: past it, a subscription grows by at most this long of its traffic. */
const CHECK_MS = 5000;

/**
 * Pending rows have a cap per subscription (DELIVERY_PENDING_MAX, issue #36): an endpoint that fails while plants
 * keep coming would otherwise grow its rows for DELIVERY_DISABLE_AFTER (five days) and slow every claim and
 * statement that reads them. Every CHECK_MS a failing subscription past the cap is disabled (see
 * disable-over-backlog in subscriber-health.sql): a clear answer its owner sees, and nothing lost. Every replica
 * checks; the statement disables each subscription once.
 */
@Injectable()
export class BacklogCap implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(BacklogCap.name);
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;

  constructor(
    private readonly health: SubscriberHealthRepository,
    @Inject(APP_CONFIG) private readonly config: WorkerConfig,
  ) {}

  onApplicationBootstrap() {
    this.timer = setInterval(() => void this.check(), CHECK_MS);
    this.timer.unref();
  }

  async onApplicationShutdown() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.checking;
  }

  /** One check; a call while one runs shares it. */
  check(): Promise<void> {
    this.checking ??= this.checkOnce().finally(() => (this.checking = null));
    return this.checking;
  }

  private async checkOnce() {
    const max = this.config.DELIVERY_PENDING_MAX;
    try {
      const disabled = await this.health.disableOverBacklog(max);
      if (disabled > 0)
        this.logger.warn(
          `disabled ${disabled} subscription(s) holding more than ${max} waiting deliveries while failing ` +
            '(DELIVERY_PENDING_MAX); enable them once their endpoint answers',
        );
    } catch (err) {
      this.logger.debug(`pending cap not checked: ${(err as Error).message}`); // next time
    }
  }
}
