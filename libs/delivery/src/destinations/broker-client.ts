import type { SendResult, WebhookRequest } from '../http/webhook-client';
import { AttemptRecord } from '../http/attempt-record';
import { webhookHeaders } from '../http/webhook-client';
import { redactCredentials } from '../redaction';
import { signDelivery } from '../signing';
import { BrokerTarget, DeliveryDestination } from './destination';
import { parseBrokerUrl, Parsed } from './destination-url';
import { DestinationPool } from './destination-pool';

/** A New Plant to send anywhere: an HTTP request's fields, the plant (a broker's key) and a broker's settings. */
export interface DestinationRequest extends WebhookRequest {
  /** The plant's id: the message key, so one plant's messages stay in order (one Kafka partition). */
  plantId?: number;
  destination?: DeliveryDestination;
  /** The subscription it is for: a subscription holds one broker connection, its current one (DestinationPool). */
  subscriptionId?: string;
}

/**
 * One attempt to a broker: the same signed headers an HTTP receiver gets (but Authorization: a token is for
 * HTTP), published through the pool's connection to that broker. A broker has no status: the attempt is recorded
 * with status null and what the broker answered (an offset, a sequence, an id) as its response; an error is an
 * attempt with an error, retried on the schedule. Never throws.
 */
export class BrokerClient {
  /**
   * The parsed URL of each destination the worker holds (its subscriber cache keeps one DeliveryDestination per
   * subscription): parsed once, not at every attempt; a destination the cache dropped is dropped here with it.
   */
  private readonly parsedFor = new WeakMap<DeliveryDestination, { url: string; parsed: Parsed<BrokerTarget> }>();

  constructor(private readonly pool: DestinationPool) {}

  private parse(r: DestinationRequest): Parsed<BrokerTarget> {
    const secrets = r.destination?.secrets ?? {};
    if (!r.destination) return parseBrokerUrl(r.url, undefined, secrets);
    const known = this.parsedFor.get(r.destination);
    if (known?.url === r.url) return known.parsed;
    const parsed = parseBrokerUrl(r.url, r.destination.settings, secrets);
    this.parsedFor.set(r.destination, { url: r.url, parsed });
    return parsed;
  }

  async send(r: DestinationRequest): Promise<SendResult> {
    const attempt = new AttemptRecord();
    const result = (partial: Partial<SendResult>) => attempt.result(partial);
    const secrets = r.destination?.secrets ?? {};
    const hide = (text: string) => redactCredentials(text, [secrets.password, secrets.key].filter(long));
    const parsed = this.parse(r);
    if (!parsed.ok) return result({ error: `the URL ${parsed.reason}` });
    const signed = signDelivery(r.secrets, r.messageId, r.body, attempt.at);
    attempt.signature = signed['webhook-signature'];
    const headers = webhookHeaders(signed, r, null);
    try {
      const key = String(r.plantId ?? r.messageId);
      const message = { key, messageId: r.messageId, body: r.body, headers };
      const answer = await this.pool.publish(parsed.value, message, r.subscriptionId);
      return result({ responseBody: hide(answer) });
    } catch (err) {
      return result({ error: hide((err as Error).message || String(err)) || 'the broker refused the message' });
    }
  }
}

const long = (s: string | undefined): s is string => s !== undefined && s.length >= 4;
