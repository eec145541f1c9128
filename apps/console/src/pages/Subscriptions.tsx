import { FormEvent, useCallback, useEffect, useState } from 'react';
import { ErrorNotice } from '../Notice';
import { client, ok, OPERATIONAL_EVENT_TYPES, Schema } from '../api';
import { Link } from '../router';
import { copyText } from '../copy';
import { Column, Table } from '../components/Table';
import { DestinationField, KIND_NAMES, parseDestination } from './subscription/Destination';

export type Subscription = Schema<'SubscriptionWithSecret'>;

/** List, create (the secret shown once), enable or disable, rotate, delete; each links to its own page. */
export function Subscriptions() {
  const [items, setItems] = useState<Subscription[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [issued, setIssued] = useState<{ id: string; secret: string } | null>(null);
  const load = useCallback(
    () => ok(client.GET('/subscriptions')).then(setItems, (e: Error) => setError(e.message)),
    [],
  );
  useEffect(() => void load(), [load]);
  const act = async (fn: () => Promise<unknown>) => {
    setError(null);
    try {
      await fn();
      await load();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const columns: Column<Subscription>[] = [
    {
      header: 'URL',
      cell: (s) => (
        <>
          <Link to={`/subscriptions/${s.id}`}>{s.url}</Link> <small>{KIND_NAMES[s.destination.kind]}</small>{' '}
          <Link to={`/deliveries?subscriptionId=${s.id}`} aria-label={`Deliveries to ${s.url}`}>
            (deliveries)
          </Link>
        </>
      ),
    },
    {
      header: 'State',
      cell: (s) => (
        <>
          {s.enabled ? 'enabled' : `disabled (${s.disabledReason ?? 'by an admin'})`}
          {s.pausedUntil ? `, paused until ${new Date(s.pausedUntil).toLocaleTimeString()}` : ''}
          {s.circuit.state !== 'closed' ? `, circuit ${s.circuit.state.replace('_', '-')}` : ''}
        </>
      ),
    },
    { header: 'Receives', cell: (s) => describeReceives(s) },
    { header: 'Description', cell: (s) => s.description ?? '' },
    {
      header: 'Actions',
      cell: (s) => (
        <>
          <button
            type="button"
            onClick={() =>
              act(() =>
                ok(
                  client.PATCH('/subscriptions/{id}', {
                    params: { path: { id: s.id } },
                    body: { enabled: !s.enabled },
                  }),
                ),
              )
            }
          >
            {s.enabled ? 'Disable' : 'Enable'}
          </button>{' '}
          <button
            type="button"
            onClick={() =>
              act(async () => {
                const r = await ok(
                  client.POST('/subscriptions/{id}/rotate-secret', { params: { path: { id: s.id } } }),
                );
                if (r.secret) setIssued({ id: r.id, secret: r.secret });
              })
            }
          >
            Rotate secret
          </button>{' '}
          <button
            type="button"
            onClick={() =>
              window.confirm(`Delete the subscription to ${s.url}? Its delivery history stays.`) &&
              act(() => ok(client.DELETE('/subscriptions/{id}', { params: { path: { id: s.id } } })))
            }
          >
            Delete
          </button>
        </>
      ),
    },
  ];
  return (
    <>
      <h1>Subscriptions</h1>
      <CreateForm
        onCreated={(s) => {
          if (s.secret) setIssued({ id: s.id, secret: s.secret });
          void load();
        }}
        onError={setError}
      />
      {issued && <SecretOnce {...issued} onDone={() => setIssued(null)} />}
      <ErrorNotice text={error} />
      <Table columns={columns} rows={items} rowKey={(s) => s.id} />
    </>
  );
}

/** A comma-separated tag field, as the filter's list. */
export const splitTags = (text: string) =>
  text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);

export const describeFilter = (f: Subscription['filter']) =>
  [
    f.tags ? `tags: ${f.tags.join(', ')}` : '',
    f.plantIds ? `ids ${f.plantIds.min ?? '…'}–${f.plantIds.max ?? '…'}` : '',
  ]
    .filter(Boolean)
    .join('; ') || 'every plant';

/** What a subscription receives: plants (through its filter), or operational events (those of its types). */
export const describeReceives = (s: Pick<Subscription, 'kind' | 'filter' | 'eventTypes'>) =>
  s.kind === 'operational' ? `operational events: ${s.eventTypes?.join(', ') ?? 'all'}` : describeFilter(s.filter);

export type EventType = (typeof OPERATIONAL_EVENT_TYPES)[number];

/** A checkbox per operational event type; none ticked means every type. */
export function EventTypesField({ value, onChange }: { value: EventType[]; onChange: (v: EventType[]) => void }) {
  return (
    <fieldset>
      <legend>Event types (none ticked: all of them)</legend>
      {OPERATIONAL_EVENT_TYPES.map((t) => (
        <label key={t}>
          <input
            type="checkbox"
            checked={value.includes(t)}
            onChange={(e) => onChange(e.target.checked ? [...value, t] : value.filter((v) => v !== t))}
          />
          {t}
        </label>
      ))}
    </fieldset>
  );
}

function CreateForm({ onCreated, onError }: { onCreated: (s: Subscription) => void; onError: (m: string) => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [tags, setTags] = useState('');
  const [kind, setKind] = useState<Subscription['kind']>('plants');
  const [types, setTypes] = useState<EventType[]>([]);
  const [destination, setDestination] = useState('');
  const [destinationError, setDestinationError] = useState<string | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    // Settings that are not JSON are said so here, in the form, and nothing is sent.
    const settings = parseDestination(destination);
    setDestinationError(settings.error ?? null);
    if (settings.error) return;
    const list = splitTags(tags);
    const receives =
      kind === 'operational'
        ? { kind, ...(types.length ? { eventTypes: types } : {}) }
        : list.length
          ? { filter: { tags: list } }
          : {};
    try {
      onCreated(
        await ok(
          client.POST('/subscriptions', {
            body: {
              url,
              ...(description ? { description } : {}),
              ...receives,
              ...(settings.value ? { destination: settings.value } : {}),
            },
          }),
        ),
      );
      setUrl('');
      setDescription('');
      setTags('');
      setTypes([]);
      setDestination('');
    } catch (err) {
      onError((err as Error).message);
    }
  };
  return (
    <form onSubmit={submit} aria-label="New subscription">
      <label>
        Receiver URL
        {/* Not type="url": a Kafka URL's list of host:port is not one a browser accepts. */}
        <input inputMode="url" value={url} onChange={(e) => setUrl(e.target.value)} required size={40} />
      </label>
      <label>
        Description
        <input value={description} onChange={(e) => setDescription(e.target.value)} />
      </label>
      <label>
        Receives
        <select value={kind} onChange={(e) => setKind(e.target.value as Subscription['kind'])}>
          <option value="plants">New Plant webhooks</option>
          <option value="operational">Operational events (Plant Store&apos;s own)</option>
        </select>
      </label>
      {kind === 'plants' ? (
        <label>
          Only these tags (comma-separated, optional)
          <input value={tags} onChange={(e) => setTags(e.target.value)} />
        </label>
      ) : (
        <EventTypesField value={types} onChange={setTypes} />
      )}
      <DestinationField value={destination} onChange={setDestination} error={destinationError} />
      <button className="primary" type="submit">
        Subscribe
      </button>
    </form>
  );
}

/** A signing secret just made: shown this once, with a copy button. */
export function SecretOnce({ id, secret, onDone }: { id: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="notice" role="status">
      <p>
        Signing secret of subscription <code>{id}</code>: <code data-testid="secret">{secret}</code>
      </p>
      <p>
        <strong>Copy it now: you will not see it again.</strong> Receivers verify the <code>webhook-signature</code>{' '}
        header with it.
      </p>
      <button
        type="button"
        onClick={() =>
          copyText(secret).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {copied ? 'Copied' : 'Copy secret'}
      </button>{' '}
      <button type="button" onClick={onDone}>
        I have saved it
      </button>
    </div>
  );
}
