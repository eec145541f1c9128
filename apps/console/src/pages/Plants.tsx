import { FormEvent, useEffect, useState } from 'react';
import { ErrorNotice } from '../Notice';
import { client, ok, query, Schema } from '../api';
import { Link, navigate } from '../router';
import { PagedTable } from '../components/PagedTable';
import { Column } from '../components/Table';
import { DELIVERY_COLUMNS } from './Deliveries';

type StoredPlant = Schema<'StoredPlant'>;

/** The newest stored plants, each linking to its own page. */
const PLANT_COLUMNS: Column<Schema<'PlantPage'>['items'][number]>[] = [
  { header: 'Id', cell: (p) => <Link to={`/plants/${p.id}`}>{p.id}</Link> },
  { header: 'Name', cell: (p) => p.name },
  { header: 'Tag', cell: (p) => p.tag ?? '' },
  { header: 'Last changed', cell: (p) => p.updatedAt },
];

/** Look a plant up by id, or browse the newest stored, paged (the read API, which takes an admin token too). */
export function Plants({ params }: { params: URLSearchParams }) {
  const cursor = params.get('cursor') ?? undefined;
  const [id, setId] = useState('');
  const [page, setPage] = useState<Schema<'PlantPage'> | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    ok(client.GET('/plants', { params: { query: { limit: 25, cursor } } })).then(setPage, (e: Error) =>
      setError(e.message),
    );
  }, [cursor]);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    navigate(`/plants/${encodeURIComponent(id.trim())}`);
  };
  return (
    <>
      <h1>Plants</h1>
      <form onSubmit={submit} aria-label="Find a plant">
        <label>
          Plant id
          <input value={id} onChange={(e) => setId(e.target.value)} inputMode="numeric" required />
        </label>
        <button className="primary" type="submit">
          Show the plant
        </button>
      </form>
      <ErrorNotice text={error} />
      <h2>Newest stored</h2>
      {page && (
        <PagedTable
          columns={PLANT_COLUMNS}
          rows={page.items}
          rowKey={(p) => p.id}
          empty="No plant stored yet."
          pager={{ cursor: page.nextCursor, to: (cursor) => `/plants${query({ cursor })}`, label: 'Older plants' }}
        />
      )}
    </>
  );
}

/** One plant as stored, and its deliveries to every subscriber. */
export function PlantPage({ id }: { id: string }) {
  const [plant, setPlant] = useState<StoredPlant | null>(null);
  const [deliveries, setDeliveries] = useState<Schema<'DeliveryPage'> | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setError(null);
    // An id that is not a number goes as it is: the API's problem names it.
    const plantId = Number(id);
    ok(client.GET('/plants/{id}', { params: { path: { id: plantId } } })).then(setPlant, (e: Error) =>
      setError(e.message),
    );
    ok(client.GET('/deliveries', { params: { query: { plantId } } })).then(setDeliveries, () => undefined);
  }, [id]);
  return (
    <>
      <h1>Plant {id}</h1>
      <ErrorNotice text={error} />
      {plant && (
        <dl className="facts">
          <dt>Name</dt>
          <dd>{plant.name}</dd>
          <dt>Tag</dt>
          <dd>{plant.tag ?? '—'}</dd>
          <dt>First stored</dt>
          <dd>{plant.createdAt}</dd>
          <dt>Last changed</dt>
          <dd>
            {plant.updatedAt} (event <code>{plant.lastEventId}</code>)
          </dd>
        </dl>
      )}
      <h2>Its deliveries</h2>
      {deliveries && (
        <PagedTable
          columns={DELIVERY_COLUMNS}
          rows={deliveries.items}
          rowKey={(d) => d.id}
          pager={{
            cursor: deliveries.nextCursor,
            to: (cursor) => `/deliveries${query({ plantId: id, cursor })}`,
            label: 'More deliveries',
          }}
        />
      )}
    </>
  );
}
