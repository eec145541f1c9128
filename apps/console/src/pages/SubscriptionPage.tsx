import { FormEvent, useCallback, useEffect, useState } from 'react';
import { Note, Notice } from '../Notice';
import { client, ok, PORTAL, Schema } from '../api';
import { Exchange } from '../Exchange';
import { Link } from '../router';
import { PortalLinks } from './PortalLinks';
import { describeReceives, EventType, EventTypesField, SecretOnce, splitTags, Subscription } from './Subscriptions';

type TestResult = Schema<'SubscriptionTestResult'>;
type Backfill = Schema<'Backfill'>;

/**
 * One subscription: edit it, enable or disable it, rotate its secret, and send it a test New Plant to see what its
 * receiver answers; an admin also makes its portal links. In portal mode this is the subscriber's home page.
 */
export function SubscriptionPage({ id }: { id: string }) {
  const [s, setS] = useState<Subscription | null>(null);
  const [note, setNote] = useState<Note>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const act = async (fn: () => Promise<Subscription>, done: string) => {
    setNote(null);
    try {
      const r = await fn();
      setS(r);
      if (r.secret) setSecret(r.secret);
      setNote({ error: false, text: done });
    } catch (e) {
      setNote({ error: true, text: (e as Error).message });
    }
  };
  const path = { params: { path: { id } } };
  const load = useCallback(
    () =>
      ok(client.GET('/subscriptions/{id}', { params: { path: { id } } })).then(setS, (e: Error) =>
        setNote({ error: true, text: e.message }),
      ),
    [id],
  );
  useEffect(() => void load(), [load]);
  if (!s)
    return (
      <>
        <h1>Subscription</h1>
        <Notice note={note} />
      </>
    );
  return (
    <>
      <h1>Subscription to {s.url}</h1>
      <p>
        {s.enabled ? 'Enabled' : `Disabled (${s.disabledReason ?? 'by an admin'})`}; receives {describeReceives(s)};
        signs {s.signature === 'asymmetric' ? 'with Ed25519 (v1a)' : 'with HMAC (v1)'}.{' '}
        <Link to={`/deliveries?subscriptionId=${s.id}`}>{PORTAL ? 'Your deliveries' : 'Its deliveries'}</Link>
      </p>
      <p>
        <button
          type="button"
          onClick={() =>
            act(
              () => ok(client.PATCH('/subscriptions/{id}', { ...path, body: { enabled: !s.enabled } })),
              s.enabled ? 'Disabled: nothing is sent until it is enabled again.' : 'Enabled.',
            )
          }
        >
          {s.enabled ? 'Disable' : 'Enable'}
        </button>{' '}
        <button
          type="button"
          onClick={() =>
            act(
              () => ok(client.POST('/subscriptions/{id}/rotate-secret', path)),
              'Rotated: the old secret keeps signing beside the new one for 24 hours.',
            )
          }
        >
          Rotate the signing secret
        </button>
      </p>
      <Health s={s} />
      <Notice note={note} />
      {secret && <SecretOnce id={s.id} secret={secret} onDone={() => setSecret(null)} />}
      <EditForm
        key={s.updatedAt}
        s={s}
        onSaved={(saved) => {
          setS(saved);
          setNote({ error: false, text: 'Saved.' });
        }}
        onError={(text) => setNote({ error: true, text })}
      />
      <TestSend id={s.id} operational={s.kind === 'operational'} />
      {!PORTAL && <PortalLinks id={s.id} />}
      {s.kind !== 'operational' && <Replay id={s.id} />}
      <Backfills id={s.id} />
    </>
  );
}

const when = (t: string | null) => (t ? new Date(t).toLocaleString() : '');

/** Its flow control and circuit breaker as the API reports them: paused until when, the circuit and why. */
function Health({ s }: { s: Subscription }) {
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

/** A limit field's value for the API: empty is no limit. */
const limitOf = (v: string) => (v.trim() === '' ? null : Number(v));

function EditForm({
  s,
  onSaved,
  onError,
}: {
  s: Subscription;
  onSaved: (s: Subscription) => void;
  onError: (m: string) => void;
}) {
  const [url, setUrl] = useState(s.url);
  const [description, setDescription] = useState(s.description ?? '');
  const [tags, setTags] = useState((s.filter.tags ?? []).join(', '));
  const [min, setMin] = useState(s.filter.plantIds?.min?.toString() ?? '');
  const [max, setMax] = useState(s.filter.plantIds?.max?.toString() ?? '');
  const [types, setTypes] = useState<EventType[]>(s.eventTypes ?? []);
  // The token is never shown: keep it, replace it, or remove it.
  const [tokenChoice, setTokenChoice] = useState<'keep' | 'replace' | 'remove'>('keep');
  const [newToken, setNewToken] = useState('');
  const [perSecond, setPerSecond] = useState(s.maxDeliveriesPerSecond?.toString() ?? '');
  const [concurrency, setConcurrency] = useState(s.maxConcurrency?.toString() ?? '');
  // Plain headers are edited as text; secret ones are never shown: remove one, or set one (name and value).
  const [plainHeaders, setPlainHeaders] = useState(
    Object.entries(s.headers)
      .map(([n, v]) => `${n}: ${v}`)
      .join('\n'),
  );
  const [removeSecret, setRemoveSecret] = useState<string[]>([]);
  const [secretName, setSecretName] = useState('');
  const [secretValue, setSecretValue] = useState('');
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const plain = parseHeaders(plainHeaders);
    if (plain === null) return onError("Write each header on a line of its own as 'Name: value'.");
    const list = splitTags(tags);
    const plantIds = {
      ...(min.trim() ? { min: Number(min) } : {}),
      ...(max.trim() ? { max: Number(max) } : {}),
    };
    const receives =
      s.kind === 'operational'
        ? { eventTypes: types.length ? types : null }
        : { filter: { ...(list.length ? { tags: list } : {}), ...(Object.keys(plantIds).length ? { plantIds } : {}) } };
    const body = {
      url,
      description,
      // Which plants it is sent is the operator's to say, not the subscriber's (a portal link cannot change it).
      ...(PORTAL ? {} : receives),
      maxDeliveriesPerSecond: limitOf(perSecond),
      maxConcurrency: limitOf(concurrency),
      ...(tokenChoice === 'replace' ? { token: newToken } : tokenChoice === 'remove' ? { token: null } : {}),
      // Merge patches: null removes a header, names not given stay.
      headers: { ...Object.fromEntries(Object.keys(s.headers).map((n) => [n, null])), ...plain },
      secretHeaders: {
        ...Object.fromEntries(removeSecret.map((n) => [n, null])),
        ...(secretName.trim() ? { [secretName.trim()]: secretValue } : {}),
      },
    };
    try {
      onSaved(await ok(client.PATCH('/subscriptions/{id}', { params: { path: { id: s.id } }, body })));
    } catch (err) {
      onError((err as Error).message);
    }
  };
  return (
    <>
      <h2>Edit</h2>
      <form onSubmit={submit} aria-label="Edit subscription">
        <label>
          Receiver URL
          {/* The API drops them with a portal link's new URL (they were the operator's, for this one): say so first. */}
          {PORTAL && (s.hasToken || s.secretHeaderNames.length > 0) && (
            <small> (a new URL removes the token and secret headers set for this one)</small>
          )}
          <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} required size={40} />
        </label>
        <label>
          Description
          <input value={description} onChange={(e) => setDescription(e.target.value)} />
        </label>
        {PORTAL ? null : s.kind === 'operational' ? (
          <EventTypesField value={types} onChange={setTypes} />
        ) : (
          <>
            <label>
              Only these tags (comma-separated)
              <input value={tags} onChange={(e) => setTags(e.target.value)} />
            </label>
            <label>
              Plant ids from
              <input value={min} onChange={(e) => setMin(e.target.value)} inputMode="numeric" size={10} />
            </label>
            <label>
              Plant ids to
              <input value={max} onChange={(e) => setMax(e.target.value)} inputMode="numeric" size={10} />
            </label>
          </>
        )}
        <label>
          At most this many deliveries a second (empty: no limit)
          <input value={perSecond} onChange={(e) => setPerSecond(e.target.value)} inputMode="decimal" size={8} />
        </label>
        <label>
          At most this many requests at once (empty: no limit)
          <input value={concurrency} onChange={(e) => setConcurrency(e.target.value)} inputMode="numeric" size={8} />
        </label>
        <label>
          Bearer token sent to the receiver {s.hasToken ? '(one is set)' : '(none)'}
          <select value={tokenChoice} onChange={(e) => setTokenChoice(e.target.value as typeof tokenChoice)}>
            <option value="keep">keep as it is</option>
            <option value="replace">replace</option>
            {s.hasToken && <option value="remove">remove</option>}
          </select>
        </label>
        {tokenChoice === 'replace' && (
          <label>
            New token
            <input type="password" value={newToken} onChange={(e) => setNewToken(e.target.value)} required />
          </label>
        )}
        <label>
          Headers sent with each delivery (one per line, Name: value)
          <textarea value={plainHeaders} onChange={(e) => setPlainHeaders(e.target.value)} rows={3} cols={40} />
        </label>
        {s.secretHeaderNames.length > 0 && (
          <fieldset>
            <legend>Secret headers (values never shown)</legend>
            {s.secretHeaderNames.map((n) => (
              <label key={n}>
                <input
                  type="checkbox"
                  checked={removeSecret.includes(n)}
                  onChange={(e) =>
                    setRemoveSecret(e.target.checked ? [...removeSecret, n] : removeSecret.filter((x) => x !== n))
                  }
                />
                remove {n}
              </label>
            ))}
          </fieldset>
        )}
        <label>
          Set a secret header: name
          <input value={secretName} onChange={(e) => setSecretName(e.target.value)} size={20} />
        </label>
        {secretName.trim() && (
          <label>
            Its value (not shown again)
            <input type="password" value={secretValue} onChange={(e) => setSecretValue(e.target.value)} required />
          </label>
        )}
        <button className="primary" type="submit">
          Save
        </button>
      </form>
    </>
  );
}

function TestSend({ id, operational }: { id: string; operational: boolean }) {
  const [result, setResult] = useState<TestResult | null>(null);
  const [note, setNote] = useState<Note>(null);
  const [busy, setBusy] = useState(false);
  const send = async () => {
    setBusy(true);
    setNote(null);
    try {
      const r = await ok(client.POST('/subscriptions/{id}/test', { params: { path: { id } } }));
      setResult(r);
      const answer = r.response.status !== null ? `HTTP ${r.response.status}` : (r.response.error ?? 'no answer');
      setNote({ error: !r.succeeded, text: `Test sent: ${answer} in ${r.response.latencyMs} ms.` });
    } catch (e) {
      setNote({ error: true, text: (e as Error).message });
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <h2>Send a test</h2>
      <p>
        A signed sample {operational ? 'operational event (the example of the first type it receives)' : 'New Plant'}{' '}
        goes to the receiver now, as a delivery would (same signature, token and timeout), with a{' '}
        <code>webhook-id</code> of its own. Nothing is stored or retried.
      </p>
      <button type="button" onClick={send} disabled={busy}>
        {busy ? 'Sending…' : operational ? 'Send a test event' : 'Send a test New Plant'}
      </button>
      <Notice note={note} />
      {result && <Exchange request={result.request} response={result.response} />}
    </>
  );
}

/**
 * Replay since a time: the failed deliveries (the default), or every delivery (those that succeeded too), sent again
 * with their webhook-id. A replay of everything goes on call after call (each bounded) until it is complete, saying
 * how many so far.
 */
function Replay({ id }: { id: string }) {
  const [since, setSince] = useState('');
  const [status, setStatus] = useState<'failed' | 'all'>('failed');
  const [note, setNote] = useState<Note>(null);
  const [busy, setBusy] = useState(false);
  const replay = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setNote(null);
    try {
      let requeued = 0;
      let cursor: string | undefined;
      for (;;) {
        const query = { since: new Date(since).toISOString(), status, cursor };
        const r = await ok(client.POST('/subscriptions/{id}/recover', { params: { path: { id }, query } }));
        requeued += r.requeued;
        if (r.complete || !r.cursor) break;
        cursor = r.cursor;
        setNote({ error: false, text: `${requeued} re-queued so far…` });
      }
      setNote({
        error: false,
        text:
          status === 'all'
            ? `${requeued} deliveries re-queued: they go out in a few seconds, oldest first per plant.`
            : `${requeued} failed deliveries re-queued.`,
      });
    } catch (err) {
      setNote({ error: true, text: (err as Error).message });
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <h2>Replay</h2>
      <p>
        Sends deliveries since a time again, each with its <code>webhook-id</code> (the same message: a receiver that
        keeps the ids it has seen can tell). Everything: every New Plant delivery whose event is at or after the time,
        those that succeeded too; a plant&apos;s versions go oldest first, and none goes after a newer version of its
        plant that reached the receiver meanwhile.
      </p>
      <form onSubmit={replay} aria-label="Replay deliveries">
        <label>
          Since
          <input type="datetime-local" value={since} onChange={(e) => setSince(e.target.value)} required />
        </label>
        <label>
          Which
          <select value={status} onChange={(e) => setStatus(e.target.value as 'failed' | 'all')}>
            <option value="failed">Failed deliveries</option>
            <option value="all">Everything</option>
          </select>
        </label>
        <button type="submit" disabled={busy}>
          {busy ? 'Replaying…' : 'Replay'}
        </button>
      </form>
      <Notice note={note} />
    </>
  );
}

/** `Name: value` lines as a header object; null when a line has no colon. */
function parseHeaders(text: string): Record<string, string> | null {
  const out: Record<string, string> = {};
  for (const line of text.split('\n').filter((l) => l.trim())) {
    const colon = line.indexOf(':');
    if (colon <= 0) return null;
    out[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return out;
}

/**
 * Backfills: send the receiver the current state of every plant it would receive (or those changed since a time),
 * with the progress of each, refreshed while one runs; a running one can be cancelled.
 */
function Backfills({ id }: { id: string }) {
  const [items, setItems] = useState<Backfill[]>([]);
  const [note, setNote] = useState<Note>(null);
  const [since, setSince] = useState('');
  const [rate, setRate] = useState('50');
  const load = useCallback(
    () =>
      ok(client.GET('/subscriptions/{id}/backfills', { params: { path: { id } } })).then(setItems, (e: Error) =>
        setNote({ error: true, text: e.message }),
      ),
    [id],
  );
  useEffect(() => void load(), [load]);
  const active = items.some((b) => b.state === 'running' || b.state === 'cancelling');
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => void load(), 2000);
    return () => clearInterval(timer);
  }, [active, load]);
  const start = async (e: FormEvent) => {
    e.preventDefault();
    try {
      const body = { ratePerSecond: Number(rate), ...(since ? { since: new Date(since).toISOString() } : {}) };
      await ok(client.POST('/subscriptions/{id}/backfills', { params: { path: { id } }, body }));
      setNote({ error: false, text: 'Backfill started.' });
      await load();
    } catch (err) {
      setNote({ error: true, text: (err as Error).message });
    }
  };
  const cancel = async (backfillId: string) => {
    try {
      await ok(
        client.POST('/subscriptions/{id}/backfills/{backfillId}/cancel', { params: { path: { id, backfillId } } }),
      );
      setNote({ error: false, text: 'Backfill cancelled: nothing more of it is sent.' });
      await load();
    } catch (err) {
      setNote({ error: true, text: (err as Error).message });
    }
  };
  return (
    <>
      <h2>Backfill</h2>
      <p>
        Sends the receiver every plant it would receive (its filter applies) as it is now, in plant-id order, each
        marked with a <code>plant-store-backfill</code> header, at the rate given; live deliveries go first.
      </p>
      <form onSubmit={start} aria-label="Start a backfill">
        <label>
          Only plants changed since (optional)
          <input type="datetime-local" value={since} onChange={(e) => setSince(e.target.value)} />
        </label>
        <label>
          Deliveries per second
          <input value={rate} onChange={(e) => setRate(e.target.value)} inputMode="numeric" size={6} required />
        </label>
        <button type="submit" disabled={active}>
          Start a backfill
        </button>
      </form>
      <Notice note={note} />
      {items.length > 0 && (
        <table>
          <caption>Backfills, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">State</th>
              <th scope="col">Progress</th>
              <th scope="col">Superseded</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {items.map((b) => (
              <tr key={b.id}>
                <td>{new Date(b.createdAt).toLocaleString()}</td>
                <td>{b.state}</td>
                <td>
                  <progress
                    value={b.sent}
                    max={Math.max(b.total, b.sent, 1)}
                    aria-label={`${b.sent} of ${b.total} plants sent`}
                  />{' '}
                  {b.sent} of {b.total}
                </td>
                <td>{b.superseded}</td>
                <td>
                  {b.state === 'running' && (
                    <button type="button" onClick={() => void cancel(b.id)}>
                      Cancel
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
