import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, GatewayConfig } from '@app/config';
import { RedriveHeaders } from '@app/contracts';
import { topicNamesFrom } from '@app/kafka';
import { ProblemException } from '@app/observability';
import { AuditRepository, DeadLetterRepository, DeadLetterRow, DeadLetterStatus } from '@app/persistence';
import { Page, toPage } from '../http/pagination';
import { EVENT_PUBLISHER, EventPublisher } from '../plant-webhook/event-publisher';
import {
  BulkResultDto,
  DeadLetterDto,
  DeadLetterWithValueDto,
  mapDeadLetter,
  mapDeadLetterWithValue,
} from './dead-letter.dto';

/**
 * Dead letters: list and inspect them, redrive (republish the original record to plant.created) or discard.
 * Each change is taken with a conditional update first, so two operators (or two clicks, or two gateway
 * replicas) cannot both redrive one: the second finds it no longer dead.
 */
@Injectable()
export class DeadLettersService {
  constructor(
    private readonly letters: DeadLetterRepository,
    private readonly audit: AuditRepository,
    @Inject(EVENT_PUBLISHER) private readonly publisher: EventPublisher,
    @Inject(APP_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async list(
    status: DeadLetterStatus | undefined,
    limit: number,
    beforeId: number | null,
  ): Promise<Page<DeadLetterDto>> {
    return toPage(await this.letters.list(status, limit + 1, beforeId), limit, mapDeadLetter);
  }

  async get(id: string): Promise<DeadLetterWithValueDto> {
    const [row] = await this.letters.findByIds([Number(id)]);
    if (!row) throw notFound(id);
    return mapDeadLetterWithValue(row);
  }

  async redriveOne(id: string, actor: string): Promise<DeadLetterDto> {
    const result = await this.redrive([id], actor);
    if (result.done.length === 0) throw notDead(id, result.skipped[0].status);
    const [row] = await this.letters.findByIds([Number(id)]);
    return mapDeadLetter(row);
  }

  async discardOne(id: string, actor: string): Promise<DeadLetterDto> {
    const result = await this.discard([id], actor);
    if (result.done.length === 0) throw notDead(id, result.skipped[0].status);
    const [row] = await this.letters.findByIds([Number(id)]);
    return mapDeadLetter(row);
  }

  /** Republishes the original key, value and headers, answered once Kafka has them all (acks=all). */
  async redrive(ids: string[], actor: string): Promise<BulkResultDto> {
    const taken = await this.letters.startRedrive(ids.map(Number), actor);
    const takenIds = taken.map((r) => r.id);
    try {
      await Promise.all(
        taken.map((r) =>
          this.publisher.publish(
            topicNamesFrom(this.config).plantCreated,
            redriveRecord(r),
            this.config.PUBLISH_TIMEOUT_MS,
          ),
        ),
      );
    } catch (err) {
      // Some may have been written: redriving them again later is harmless (the worker applies an event id once).
      await this.letters.finishRedrive(takenIds, false);
      throw ProblemException.of(
        'unavailable',
        `Kafka did not take the redriven records in time (${(err as Error).message}); they are still dead: retry`,
        {},
        { 'retry-after': '5' },
      );
    }
    await this.letters.finishRedrive(takenIds, true);
    await this.recordAudit('dead_letter.redriven', taken, actor);
    return this.result(ids, taken);
  }

  async discard(ids: string[], actor: string): Promise<BulkResultDto> {
    const discarded = await this.letters.discard(ids.map(Number), actor);
    await this.recordAudit('dead_letter.discarded', discarded, actor);
    return this.result(ids, discarded);
  }

  private async recordAudit(action: string, rows: DeadLetterRow[], actor: string) {
    await this.audit.recordMany(
      rows.map((r) => ({
        actor,
        action,
        details: {
          deadLetterId: String(r.id),
          origin: `${r.origin_topic}[${r.origin_partition}]@${r.origin_offset}`,
        },
      })),
    );
  }

  private async result(ids: string[], done: DeadLetterRow[]): Promise<BulkResultDto> {
    const doneIds = new Set(done.map((r) => String(r.id)));
    const rest = ids.filter((id) => !doneIds.has(id));
    const current = new Map((await this.letters.findByIds(rest.map(Number))).map((r) => [String(r.id), r.status]));
    return {
      done: ids.filter((id) => doneIds.has(id)),
      skipped: rest.map((id) => ({ id, status: current.get(id) ?? 'not_found' })),
    };
  }
}

/** The original record again, marked with where it comes back from. */
function redriveRecord(r: DeadLetterRow) {
  const headers: Record<string, Buffer | string> = Object.fromEntries(
    Object.entries(r.headers).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
  );
  headers[RedriveHeaders.from] = `plant.created.dlq[${r.dlq_partition}]@${r.dlq_offset}`;
  headers[RedriveHeaders.deadLetterId] = String(r.id);
  return { key: r.key, value: r.value, headers };
}

const notFound = (id: string) => ProblemException.of('notFound', `No dead letter ${id}`);
const notDead = (id: string, status: string) =>
  status === 'not_found'
    ? notFound(id)
    : ProblemException.of(
        'conflict',
        `Dead letter ${id} is ${status}: only a dead one can be redriven or discarded (see GET /dead-letters/${id})`,
      );
