import { AttemptRecord, DeliveryRepository } from '@app/persistence';

/**
 * Coalesces attempt records written while one write is in flight into the next multi-row write. Each caller
 * learns when its record is stored, so a delivery's slot is freed only once its outcome is durable.
 */
export class AttemptRecorder {
  private queue: { record: AttemptRecord; done: (err?: Error) => void }[] = [];
  private writing: Promise<void> | null = null;

  constructor(private readonly deliveries: Pick<DeliveryRepository, 'recordAttempts'>) {}

  record(record: AttemptRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ record, done: (err) => (err ? reject(err) : resolve()) });
      if (!this.writing) this.writing = this.drain();
    });
  }

  private async drain() {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, 500);
      try {
        await this.deliveries.recordAttempts(batch.map((b) => b.record));
        batch.forEach((b) => b.done());
      } catch (err) {
        batch.forEach((b) => b.done(err as Error));
      }
    }
    this.writing = null;
  }
}
