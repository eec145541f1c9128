import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, WorkerConfig } from '@app/config';
import { LoopHeaders } from '@app/contracts';
import { checkUrlShape, ClaimedDelivery, DeliveryAttempt, parseRetryAfter, signDelivery } from '@app/delivery';
import { Tracing } from '@app/observability';
import { attemptSpan, endAttemptSpan } from './attempt-span';
import { Agents, deliveryAgents, httpPost } from './http-post';

export interface SendResult extends DeliveryAttempt {
  retryAfterMs: number | null;
}

const USER_AGENT = 'PlantStore-Webhooks/1.0 (+https://plant.store)';
const MAX_RESPONSE_BYTES = 1024;

/**
 * One HTTP attempt: the SSRF guard (the URL's shape and IP literals here; resolved names inside the agents'
 * lookup, on the address actually connected to), signing, a timeout, no redirects.
 */
@Injectable()
export class DeliverySender {
  private readonly agents: Agents;

  constructor(
    @Inject(APP_CONFIG) private readonly config: WorkerConfig,
    private readonly tracing: Tracing,
  ) {
    this.agents = deliveryAgents(config.DELIVERY_ALLOW_PRIVATE_NETWORKS);
  }

  async send(d: ClaimedDelivery): Promise<SendResult> {
    const span = attemptSpan(this.tracing, d);
    const result = await this.attempt(d, this.tracing.traceparent(span));
    endAttemptSpan(span, result);
    return result;
  }

  private async attempt(d: ClaimedDelivery, traceparent: string | undefined): Promise<SendResult> {
    const attemptedAt = new Date();
    const started = performance.now();
    const result = (partial: Partial<SendResult>): SendResult => ({
      attemptedAt: attemptedAt.toISOString(),
      status: null,
      latencyMs: Math.round(performance.now() - started),
      error: null,
      responseBody: null,
      retryAfterMs: null,
      ...partial,
    });

    const allowed = checkUrlShape(d.url, this.config.DELIVERY_ALLOW_PRIVATE_NETWORKS);
    if (!allowed.ok) return result({ error: `refused by the SSRF guard: ${allowed.reason}` });

    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      ...signDelivery(d.secrets, d.eventId, d.body, attemptedAt),
      // A Plant Store receiving this carries both on, so that a loop through it dies out (see LoopHeaders).
      [LoopHeaders.hops]: String(d.hops + 1),
      [LoopHeaders.origin]: d.originEventId,
    };
    if (d.token) headers.authorization = `Bearer ${d.token}`;
    // The attempt's own span: a receiver that traces continues the sender's trace.
    if (traceparent) headers.traceparent = traceparent;
    try {
      const res = await httpPost(
        this.agents,
        d.url,
        headers,
        d.body,
        this.config.DELIVERY_TIMEOUT_MS,
        MAX_RESPONSE_BYTES,
      );
      const retryAfter = res.headers['retry-after'];
      return result({
        status: res.status,
        responseBody: res.body || null,
        retryAfterMs: parseRetryAfter(typeof retryAfter === 'string' ? retryAfter : null),
      });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'ESSRFBLOCKED') return result({ error: `refused by the SSRF guard: ${e.message}` });
      return result({ error: e.code === 'ETIMEDOUT' ? e.message : (e.code ?? e.message) });
    }
  }
}
