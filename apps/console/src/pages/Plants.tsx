import { FormEvent, useEffect, useState } from 'react';
import { ErrorNotice } from '../Notice';
import { client, ok, query, Schema } from '../api';
import { Link, navigate } from '../router';
import { DeliveryTable } from './Deliveries';

type StoredPlant = Schema<'StoredPlant'>;

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
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Name</th>
                <th scope="col">Tag</th>
                <th scope="col">Last changed</th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((p) => (
                <tr key={p.id}>
                  <td>
                    <Link to={`/plants/${p.id}`}>{p.id}</Link>
                  </td>
                  <td>{p.name}</td>
                  <td>{p.tag ?? ''}</td>
                  <td>{p.updatedAt}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {page.items.length === 0 && <p>No plant stored yet.</p>}
          {page.nextCursor && (
            <p>
              <Link to={`/plants${query({ cursor: page.nextCursor })}`}>Older plants</Link>
            </p>
          )}
        </>
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
      {deliveries && <DeliveryTable items={deliveries.items} />}
      {deliveries?.nextCursor && (
        <p>
          <Link to={`/deliveries${query({ plantId: id, cursor: deliveries.nextCursor })}`}>More deliveries</Link>
        </p>
      )}
    </>
  );
}
