import { AttemptRecord, DeliveryAttempt, Outbox } from '@app/delivery';
import { RateLimitedLog } from '@app/observability';
import { isDatabaseUnavailable, isDataError, WriteCoalescer } from '@app/persistence';

/**
 * Outcomes wait this long for others to share their statement: the receiver has its delivery already, and a
 * statement costs ~0.8 ms plus ~35 µs a row (measured), so a few milliseconds buy fewer, fuller statements.
 */
const RECORD_LINGER_MS = 10;
/** An outcome the database could not take (away, too slow) is tried again while its lease has this much left. */
const RECORD_RETRY_MARGIN_MS = 1000;

/** Writes the outcomes of attempts, in batches: one statement for every attempt that finished meanwhile. */
export class OutcomeRecorder {
  private readonly batches: WriteCoalescer<AttemptRecord, void>;

  constructor(
    outbox: Outbox,
    private readonly failures: RateLimitedLog,
  ) {
    this.batches = new WriteCoalescer((records) => outbox.record(records), 500, undefined, RECORD_LINGER_MS);
  }

  /**
   * Writes an outcome. If the database refuses this one record for its data (the batch it was in was split until
   * it stood alone, and the others were written), it is written again without the subscriber's reply, the refusal
   * as its error: the outcome counts, and the delivery is not sent again and again.
   */
  async record(record: AttemptRecord): Promise<void> {
    try {
      await this.retrying(record);
    } catch (err) {
      if (!isDataError(err) || record.attempt === null) throw err;
      const attempt: DeliveryAttempt = {
        ...record.attempt,
        responseBody: null,
        error: `the attempt's record was refused by the database (${(err as Error).message}); its reply is not kept`,
      };
      await this.retrying({ ...record, attempt });
    }
  }

  /**
   * While the database is away or too slow (a bounded query timed out), tries again as long as the delivery's
   * lease lasts, rather than let the lease run out and the receiver get it a second time. A statement cancelled or
   * never sent changed nothing; in the rare case that one committed but its answer was lost, the retry adds the
   * attempt to the log twice, which is cheaper than sending the webhook twice.
   */
  private async retrying(record: AttemptRecord): Promise<void> {
    const deadline = record.delivery.lease.until - RECORD_RETRY_MARGIN_MS; // as this claim knows it, renewals included
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.batches.add(record);
      } catch (err) {
        const waitMs = Math.min(200 * 2 ** (attempt - 1), 2000);
        if (!isDatabaseUnavailable(err) || Date.now() + waitMs >= deadline) throw err;
        this.failures.log('warn', 'record', {}, `recording outcomes failed, retrying: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, waitMs));
      }
    }
  }
}
