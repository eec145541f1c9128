import { Subscription } from '../Subscriptions';

const when = (t: string | null) => (t ? new Date(t).toLocaleString() : '');

/** Its flow control and circuit breaker as the API reports them: paused until when, the circuit and why. */
export function Health({ s }: { s: Subscription }) {
  const c = s.circuit;
  const circuit =
    c.state === 'closed'
      ? 'closed: deliveries go'
      : c.state === 'open'
        ? `open since ${when(c.since)}: its deliveries wait (no attempt spent); next probe ${when(c.nextProbeAt)}`
        : `half-open since ${when(c.since)}: one probe is being sent`;
  return (
    <>
      <h2>Health and flow control</h2>
      <dl aria-label="Health and flow control">
        <dt>Paused</dt>
        <dd>{s.pausedUntil ? `until ${when(s.pausedUntil)}: the receiver asked to wait (Retry-After)` : 'no'}</dd>
        <dt>Circuit</dt>
        <dd>{circuit}</dd>
        {(c.consecutiveFailures > 0 || c.lastError) && (
          <>
            <dt>Failures</dt>
            <dd>
              {c.consecutiveFailures} in a row{c.failingSince ? `, failing since ${when(c.failingSince)}` : ''}
              {c.lastError ? `; last: ${c.lastError}` : ''}
            </dd>
          </>
        )}
        <dt>Limits</dt>
        <dd>
          {s.maxDeliveriesPerSecond === null ? 'no rate limit' : `at most ${s.maxDeliveriesPerSecond} a second`},{' '}
          {s.maxConcurrency === null ? 'no concurrency limit' : `at most ${s.maxConcurrency} at once`}
        </dd>
      </dl>
    </>
  );
}
