import { useId } from 'react';
import type { Schema } from '../../api';
import type { Subscription } from '../Subscriptions';

type Kind = Schema<'SubscriptionDestinationShown'>['kind'];
type Settings = Schema<'SubscriptionDestination'>;

/** Where its New Plants go, as a person names it: the kind its URL's scheme selects (docs/destinations.md). */
export const KIND_NAMES: Record<Kind, string> = {
  http: 'HTTP',
  kafka: 'Kafka',
  amqp: 'RabbitMQ',
  nats: 'NATS JetStream',
  mqtt: 'MQTT',
  redis: 'Redis stream',
  sqs: 'Amazon SQS',
};

/** Schemes that are TLS without any settings. */
const TLS_SCHEMES = /^(https|amqps|mqtts|rediss|sqs):/i;

/** TLS as its scheme and settings say: what is given (never the key itself: it is sealed, not shown). */
function describeTls(url: string, tls: Settings['tls']): string {
  if (!tls) return TLS_SCHEMES.test(url) ? 'on (public CAs)' : 'off';
  const check = tls.rejectUnauthorized === false ? 'any certificate accepted' : tls.ca ? 'CA certificate present' : '';
  return ['on', check || 'public CAs', tls.cert ? 'client certificate present' : ''].filter(Boolean).join(', ');
}

/** Its destination: the kind, whether credentials are stored (sealed, never shown), and the settings shown. */
export function Destination({ s }: { s: Pick<Subscription, 'url' | 'destination'> }) {
  const { kind, hasCredentials, settings } = s.destination;
  return (
    <>
      <h2>Destination</h2>
      <dl aria-label="Destination">
        <dt>Kind</dt>
        <dd>{KIND_NAMES[kind]}</dd>
        <dt>Credentials</dt>
        <dd>{hasCredentials ? 'credentials sealed (stored encrypted, never shown)' : 'none'}</dd>
        <dt>TLS</dt>
        <dd>{describeTls(s.url, settings.tls)}</dd>
        {settings.oauth2 && (
          <>
            <dt>OAuth 2</dt>
            <dd>
              client {settings.oauth2.clientId} at {settings.oauth2.tokenUrl}
              {settings.oauth2.scope ? `, scope ${settings.oauth2.scope}` : ''}
            </dd>
          </>
        )}
        {kind === 'kafka' && (
          <>
            <dt>SASL mechanism</dt>
            <dd>{settings.sasl?.mechanism ?? 'not set (plain when the URL has a user)'}</dd>
          </>
        )}
        {kind === 'sqs' && (
          <>
            <dt>Queue order</dt>
            <dd>
              {/\.fifo(\?|$)/.test(s.url)
                ? 'FIFO: in order per plant (message group), duplicates dropped by webhook-id'
                : 'standard: SQS does not keep order; consumers de-duplicate by webhook-id'}
            </dd>
          </>
        )}
        {kind === 'redis' && (
          <>
            <dt>Stream length</dt>
            <dd>about {(settings.maxLen ?? 100_000).toLocaleString()} entries at most (XADD MAXLEN ~)</dd>
          </>
        )}
      </dl>
    </>
  );
}

/** The settings field's text as the API's `destination`: undefined when empty, or why it cannot be sent. */
export function parseDestination(text: string): { value?: Settings; error?: string } {
  if (!text.trim()) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { error: `Destination settings are not valid JSON (${(err as Error).message}). Nothing was sent.` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { error: 'Destination settings must be a JSON object, like {"tls": {"ca": "…"}}. Nothing was sent.' };
  return { value: value as Settings };
}

/** A destination's settings as JSON (optional), with what they are for and why they were not sent. */
export function DestinationField({
  value,
  onChange,
  error,
}: {
  value: string;
  onChange: (text: string) => void;
  error: string | null;
}) {
  const hint = useId();
  const problem = useId();
  return (
    <div>
      <label>
        Destination settings (JSON)
        <textarea
          value={value}
          onChange={(e) => onChange(e.target.value)}
          rows={3}
          cols={40}
          spellCheck={false}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${hint} ${problem}` : hint}
        />
      </label>
      <small id={hint}>
        Optional. The URL&apos;s scheme selects where plants go: http(s)://, kafka://, amqp(s)://, nats://, mqtt(s)://,
        redis(s)://, sqs://. Settings: <code>tls</code> (<code>ca</code>, <code>cert</code>, <code>key</code>),{' '}
        <code>sasl</code> for Kafka, <code>maxLen</code> for Redis, <code>oauth2</code> for http(s). The user and
        password go in the URL; they, a key and a client secret are sealed, never shown.
      </small>
      {error && (
        <p id={problem} className="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
