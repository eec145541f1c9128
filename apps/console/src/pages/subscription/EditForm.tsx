import { FormEvent, useState } from 'react';
import { client, ok, PORTAL } from '../../api';
import { EventType, EventTypesField, splitTags, Subscription } from '../Subscriptions';

/** A limit field's value for the API: empty is no limit. */
const limitOf = (v: string) => (v.trim() === '' ? null : Number(v));

export function EditForm({
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
      // Only a changed URL: the API takes a URL as a new destination, and the stored credentials and settings go
      // with the old one (the URL shown here is without them), so sending it unchanged would drop them.
      ...(url !== s.url ? { url } : {}),
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
          {(s.destination.hasCredentials || Object.keys(s.destination.settings).length > 0) && (
            <small>
              {' '}
              (a new URL carries its own user and password: the stored credentials and settings are dropped)
            </small>
          )}
          <input inputMode="url" value={url} onChange={(e) => setUrl(e.target.value)} required size={40} />
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
