import { FormEvent, useCallback, useEffect, useState } from 'react';
import { ErrorNotice, Note, Notice } from '../Notice';
import { client, ok, PORTAL, query, Schema } from '../api';
import { Exchange } from '../Exchange';
import { Link, navigate } from '../router';
import { PagedTable } from '../components/PagedTable';
import { Column, Table } from '../components/Table';

export type Delivery = Schema<'Delivery'>;
type DeliveryPage = Schema<'DeliveryPage'>;
type DeliveryDetail = Schema<'DeliveryWithAttempts'>;
type Status = Delivery['status'];

const FILTERS = ['subscriptionId', 'status', 'plantId', 'since', 'until'] as const;

/** Filter by subscription, status, plant and time; newest first, paged; retry every failed one in the filter. */
export function Deliveries({ params }: { params: URLSearchParams }) {
  const filter = Object.fromEntries(FILTERS.map((k) => [k, params.get(k) ?? undefined])) as Record<
    (typeof FILTERS)[number],
    string | undefined
  >;
  const cursor = params.get('cursor') ?? undefined;
  const [page, setPage] = useState<DeliveryPage | null>(null);
  const [message, setMessage] = useState<Note>(null);
  const key = params.toString();
  const load = useCallback(() => {
    // Values from the address bar go as they are: the API answers a wrong one with a problem that names it.
    const plantId = filter.plantId ? Number(filter.plantId) : undefined;
    ok(
      client.GET('/deliveries', {
        params: { query: { ...filter, status: filter.status as Status | undefined, plantId, cursor } },
      }),
    ).then(setPage, (e: Error) => setMessage({ error: true, text: e.message }));
  }, [key]);
  useEffect(load, [load]);
  const retryAll = async () => {
    const { status: _s, ...rest } = filter;
    const body = Object.fromEntries(
      Object.entries({ ...rest, plantId: rest.plantId ? Number(rest.plantId) : undefined }).filter(
        ([, v]) => v !== undefined,
      ),
    );
    if (Object.keys(body).length === 0)
      return setMessage({ error: true, text: 'Choose a subscription, a plant or a time range first.' });
    try {
      const r = await ok(client.POST('/deliveries/retry', { body }));
      setMessage({ error: false, text: `${r.requeued} failed deliveries sent again.` });
      load();
    } catch (e) {
      setMessage({ error: true, text: (e as Error).message });
    }
  };
  return (
    <>
      <h1>Deliveries</h1>
      <FilterForm initial={filter} />
      <p>
        <button type="button" onClick={retryAll}>
          Retry every failed delivery in this filter
        </button>
      </p>
      <Notice note={message} />
      {page && (
        <PagedTable
          columns={DELIVERY_COLUMNS}
          rows={page.items}
          rowKey={(d) => d.id}
          empty="No delivery matches."
          pager={{
            cursor: page.nextCursor,
            to: (cursor) => `/deliveries${query({ ...filter, cursor })}`,
            label: 'Older deliveries',
          }}
        />
      )}
    </>
  );
}

/** Deliveries, newest first, each linking to its own page. */
export const DELIVERY_COLUMNS: Column<Delivery>[] = [
  { header: 'Delivery', cell: (d) => <Link to={`/deliveries/${d.id}`}>{d.id.slice(0, 8)}</Link> },
  { header: 'Plant (or event)', cell: (d) => (d.plantId === null ? d.eventType : <PlantLink id={d.plantId} />) },
  { header: 'Status', cell: (d) => d.status },
  { header: 'Attempts', cell: (d) => d.attempts },
  { header: 'Next attempt', cell: (d) => d.nextAttemptAt ?? '' },
  { header: 'Created', cell: (d) => d.createdAt },
];

/** A plant's page, in the console; in the portal (no plant pages there) its id alone. */
const PlantLink = ({ id }: { id: number }) => (PORTAL ? <>{id}</> : <Link to={`/plants/${id}`}>{id}</Link>);

/** datetime-local has no zone: it is the browser's local time, sent as RFC 3339. */
const toIso = (local: string) => (local ? new Date(local).toISOString() : undefined);
const toLocal = (iso?: string) => {
  if (!iso) return '';
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
};

function FilterForm({ initial }: { initial: Record<string, string | undefined> }) {
  const [f, setF] = useState({ ...initial, since: toLocal(initial.since), until: toLocal(initial.until) });
  const field = (k: string) => ({
    value: (f as Record<string, string | undefined>)[k] ?? '',
    onChange: (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    navigate(`/deliveries${query({ ...f, since: toIso(f.since ?? ''), until: toIso(f.until ?? '') })}`);
  };
  return (
    <form onSubmit={submit} aria-label="Filter deliveries">
      {!PORTAL && (
        <label>
          Subscription id
          <input {...field('subscriptionId')} size={36} />
        </label>
      )}
      <label>
        Status
        <select {...field('status')}>
          <option value="">any</option>
          <option value="pending">pending</option>
          <option value="succeeded">succeeded</option>
          <option value="failed">failed</option>
        </select>
      </label>
      <label>
        Plant id
        <input {...field('plantId')} inputMode="numeric" size={12} />
      </label>
      <label>
        Created from
        <input type="datetime-local" {...field('since')} />
      </label>
      <label>
        Created before
        <input type="datetime-local" {...field('until')} />
      </label>
      <button className="primary" type="submit">
        Filter
      </button>
    </form>
  );
}

/** A delivery's attempts, as its attempt log lists them. */
const ATTEMPT_COLUMNS: Column<DeliveryDetail['attemptLog'][number]>[] = [
  { header: 'At', cell: (a) => a.attemptedAt },
  { header: 'Status', cell: (a) => a.status ?? '—' },
  { header: 'Latency', cell: (a) => <>{a.latencyMs} ms</> },
  { header: 'Error', cell: (a) => a.error ?? '' },
  { header: 'Response', cell: (a) => <code>{a.responseBody ?? ''}</code> },
];

/** One delivery: what was sent, every attempt, and a retry when it failed. */
export function DeliveryPage({ id }: { id: string }) {
  const [d, setD] = useState<DeliveryDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(
    () =>
      ok(client.GET('/deliveries/{id}', { params: { path: { id } } })).then(setD, (e: Error) => setError(e.message)),
    [id],
  );
  useEffect(() => void load(), [load]);
  const retry = () =>
    ok(client.POST('/deliveries/{id}/retry', { params: { path: { id } } })).then(
      () => load(),
      (e: Error) => setError(e.message),
    );
  return (
    <>
      <h1>Delivery {id}</h1>
      <ErrorNotice text={error} />
      {d && (
        <>
          <p>
            {d.plantId === null ? (
              <>Operational event {d.eventType}</>
            ) : (
              <>
                Plant <PlantLink id={d.plantId} />
              </>
            )}{' '}
            to subscription <Link to={`/deliveries?subscriptionId=${d.subscriptionId}`}>{d.subscriptionId}</Link>:{' '}
            <strong>{d.status}</strong> after {d.attempts} attempt(s)
            {d.nextAttemptAt ? `, next at ${d.nextAttemptAt}` : ''}.{' '}
            {d.status === 'failed' && (
              <button type="button" onClick={retry}>
                Retry now
              </button>
            )}
          </p>
          <h2>Request</h2>
          <p>What the last attempt sent: the exact body, its headers and signature.</p>
          <Exchange request={d.request} />
          <h2>Attempts</h2>
          <Table columns={ATTEMPT_COLUMNS} rows={d.attemptLog} rowKey={(_a, i) => i} />
        </>
      )}
    </>
  );
}
