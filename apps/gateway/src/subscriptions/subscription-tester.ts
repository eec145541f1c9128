import { randomUUID } from 'node:crypto';
import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, GatewayConfig } from '@app/config';
import { attemptSucceeded, DestinationClient, sentHeaders } from '@app/delivery';
import { ProblemException } from '@app/observability';
import { SendableSubscription } from '@app/persistence';
import { NoSlot, TestSendSlots } from './test-send-slots';
import { retryAfterSeconds } from '../http/retry-after';

/**
 * Test sends one gateway makes at once: each may wait DELIVERY_TIMEOUT_MS on a slow receiver. One subscription
 * holds at most TEST_SENDS_PER_SUBSCRIPTION of them (test-send-slots.ts).
 */
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
  private readonly client: DestinationClient;
  private readonly slots: TestSendSlots;

  constructor(@Inject(APP_CONFIG) config: GatewayConfig) {
    // Its own broker connections, few: a test send to a broker opens one, closed when idle for a minute.
    this.client = new DestinationClient({
      allowPrivateNetworks: config.DELIVERY_ALLOW_PRIVATE_NETWORKS,
      timeoutMs: config.DELIVERY_TIMEOUT_MS,
      maxConnections: Math.min(config.DESTINATION_MAX_CONNECTIONS, MAX_TEST_SENDS),
      idleMs: 60_000,
    });
    this.slots = new TestSendSlots(MAX_TEST_SENDS, config.TEST_SENDS_PER_SUBSCRIPTION, config.DELIVERY_TIMEOUT_MS);
  }

  async send(s: SendableSubscription, plant: object): Promise<SubscriptionTestResultDto> {
    const slot = this.slots.take(s.id);
    if ('refused' in slot) throw noSlot(slot, s.id, this.slots.perSubscription);
    const messageId = `msg_test_${randomUUID()}`;
    const body = JSON.stringify(plant);
    const loop = { hops: 0, originEventId: messageId };
    const custom = {
      headers: s.headers,
      secretHeaders: s.secretHeaders,
      destination: s.destination,
      subscriptionId: s.id,
    };
    const attempt = await this.client
      .send({ url: s.url, messageId, body, secrets: s.secrets, token: s.token, ...custom, ...loop })
      .finally(() => slot.release());
    return {
      request: {
        body,
        headers: sentHeaders(
          messageId,
          attempt,
          loop,
          s.token !== null,
          { headers: s.headers, secretHeaderNames: Object.keys(s.secretHeaders) },
          s.destination,
        ),
      },
      response: {
        status: attempt.status,
        latencyMs: attempt.latencyMs,
        error: attempt.error,
        body: attempt.responseBody,
      },
      succeeded: attemptSucceeded(attempt),
    };
  }

  async onApplicationShutdown() {
    await this.client.close();
  }
}

/**
 * 429 to the subscription past its share (its own receiver is slow: only its tests wait), with when its oldest
 * send is answered at the latest; 503 when the gateway's slots are all held (by several subscriptions).
 */
function noSlot(slot: NoSlot, subscriptionId: string, share: number): ProblemException {
  if (slot.refused === 'total')
    return ProblemException.of(
      'unavailable',
      `${MAX_TEST_SENDS} test sends are already waiting for their receivers on this gateway; retry in a few seconds`,
      {},
      { 'retry-after': '5' },
    );
  const seconds = retryAfterSeconds(slot.retryAfterMs);
  return ProblemException.of(
    'tooManyRequests',
    `${share} test sends of subscription ${subscriptionId} are already waiting for its receiver, as many as one ` +
      `subscription may have at once (TEST_SENDS_PER_SUBSCRIPTION): retry in ${seconds} s (Retry-After), when ` +
      'the oldest is answered or times out. A receiver that answers slowly holds up only its own tests.',
    { reason: 'test-send-share', subscriptionId, retryAfterSeconds: seconds } as never,
    { 'retry-after': String(seconds) },
  );
}
