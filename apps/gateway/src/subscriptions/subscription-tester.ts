import { randomUUID } from 'node:crypto';
import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, GatewayConfig } from '@app/config';
import { sentHeaders, WebhookClient } from '@app/delivery';
import { ProblemException } from '@app/observability';
import { SendableSubscription } from '@app/persistence';

/** Test sends one gateway makes at once: each may wait DELIVERY_TIMEOUT_MS on a slow receiver. */
export const MAX_TEST_SENDS = 16;

/** POST /subscriptions/{id}/test (SubscriptionTestResult in /openapi.json). */
export interface SubscriptionTestResultDto {
  request: { body: string; headers: Record<string, string> | null };
  response: { status: number | null; latencyMs: number; error: string | null; body: string | null };
  succeeded: boolean;
}

/**
 * Sends one test New Plant, as a delivery would be sent (the shared WebhookClient: SSRF guard, signature,
 * token, timeout), and reports what came back. Its `webhook-id` is its own, so a receiver that de-duplicates
 * never confuses it with a real delivery.
 */
@Injectable()
export class SubscriptionTester implements OnApplicationShutdown {
  private readonly client: WebhookClient;
  private inFlight = 0;

  constructor(@Inject(APP_CONFIG) config: GatewayConfig) {
    this.client = new WebhookClient(config.DELIVERY_ALLOW_PRIVATE_NETWORKS, config.DELIVERY_TIMEOUT_MS);
  }

  async send(s: SendableSubscription, plant: object): Promise<SubscriptionTestResultDto> {
    if (this.inFlight >= MAX_TEST_SENDS)
      throw ProblemException.of(
        'unavailable',
        `${MAX_TEST_SENDS} test sends are already waiting for their receivers on this gateway; retry in a few seconds`,
        {},
        { 'retry-after': '5' },
      );
    const messageId = `msg_test_${randomUUID()}`;
    const body = JSON.stringify(plant);
    const loop = { hops: 0, originEventId: messageId };
    const custom = { headers: s.headers, secretHeaders: s.secretHeaders };
    this.inFlight++;
    const attempt = await this.client
      .send({ url: s.url, messageId, body, secrets: s.secrets, token: s.token, ...custom, ...loop })
      .finally(() => this.inFlight--);
    return {
      request: {
        body,
        headers: sentHeaders(messageId, attempt, loop, s.token !== null, {
          headers: s.headers,
          secretHeaderNames: Object.keys(s.secretHeaders),
        }),
      },
      response: {
        status: attempt.status,
        latencyMs: attempt.latencyMs,
        error: attempt.error,
        body: attempt.responseBody,
      },
      succeeded: attempt.status !== null && attempt.status >= 200 && attempt.status < 300,
    };
  }

  async onApplicationShutdown() {
    await this.client.close();
  }
}
