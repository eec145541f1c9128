import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, WorkerConfig } from '@app/config';
import { checkSubscriberUrl, parseRetryAfter, signDelivery } from '@app/delivery';
import { ClaimedDelivery, DeliveryAttempt } from '@app/persistence';

export interface SendResult extends DeliveryAttempt {
  retryAfterMs: number | null;
}

const USER_AGENT = 'PlantStore-Webhooks/1.0 (+https://plant.store)';
const MAX_RESPONSE_BYTES = 1024;

/** One HTTP attempt: the SSRF guard again (DNS may have changed), signing, a timeout, no redirects. */
@Injectable()
export class DeliverySender {
  constructor(@Inject(APP_CONFIG) private readonly config: WorkerConfig) {}

  async send(d: ClaimedDelivery): Promise<SendResult> {
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

    const allowed = await checkSubscriberUrl(d.url, this.config.DELIVERY_ALLOW_PRIVATE_NETWORKS);
    if (!allowed.ok) return result({ error: `refused by the SSRF guard: ${allowed.reason}` });

    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      ...signDelivery(d.secrets, d.eventId, d.body, attemptedAt),
    };
    if (d.token) headers.authorization = `Bearer ${d.token}`;
    try {
      const res = await fetch(d.url, {
        method: 'POST',
        headers,
        body: d.body,
        redirect: 'manual', // a redirect is a failure (Standard Webhooks), never followed
        signal: AbortSignal.timeout(this.config.DELIVERY_TIMEOUT_MS),
      });
      const responseBody = await readPrefix(res, MAX_RESPONSE_BYTES);
      return result({ status: res.status, responseBody, retryAfterMs: parseRetryAfter(res.headers.get('retry-after')) });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      const reason = e.name === 'TimeoutError' ? `timed out after ${this.config.DELIVERY_TIMEOUT_MS} ms` : (e.cause?.code ?? e.message);
      return result({ error: reason });
    }
  }
}

/** The first KiB of the response for the attempt log; the rest is discarded unread. */
async function readPrefix(res: Response, max: number): Promise<string | null> {
  if (!res.body) return null;
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).subarray(0, max).toString('utf8');
}
