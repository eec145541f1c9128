import { useCallback, useEffect, useState } from 'react';
import { Note, Notice } from '../Notice';
import { client, ok, query, Schema } from '../api';
import { navigate } from '../router';
import { PagedTable } from '../components/PagedTable';
import { Column } from '../components/Table';

type DeadLetter = Schema<'DeadLetter'> & Partial<Schema<'DeadLetterWithValue'>>;
type Status = Schema<'DeadLetter'>['status'];

/** Records the worker could not store: why, from where; redrive (after fixing the cause) or discard. */
export function DeadLetters({ params }: { params: URLSearchParams }) {
  const status = params.get('status') ?? 'dead';
  const cursor = params.get('cursor') ?? undefined;
  const [page, setPage] = useState<Schema<'DeadLetterPage'> | null>(null);
  const [open, setOpen] = useState<DeadLetter | null>(null);
  const [message, setMessage] = useState<Note>(null);
  const load = useCallback(
    () =>
      ok(client.GET('/dead-letters', { params: { query: { status: status as Status, cursor } } })).then(
        setPage,
        (e: Error) => setMessage({ error: true, text: e.message }),
      ),
    [status, cursor],
  );
  useEffect(() => void load(), [load]);
  const act = async (id: string, action: 'redrive' | 'discard') => {
    try {
      const path = { params: { path: { id } } };
      await ok(
        action === 'redrive'
          ? client.POST('/dead-letters/{id}/redrive', path)
          : client.POST('/dead-letters/{id}/discard', path),
      );
      setMessage({ error: false, text: `Dead letter ${id} ${action === 'redrive' ? 'redriven' : 'discarded'}.` });
      await load();
    } catch (e) {
      setMessage({ error: true, text: (e as Error).message });
    }
  };
  const columns: Column<Schema<'DeadLetter'>>[] = [
    { header: 'Id', cell: (d) => d.id },
    { header: 'At', cell: (d) => d.deadLetteredAt },
    { header: 'Key', cell: (d) => d.key ?? '' },
    { header: 'From', cell: (d) => `${d.origin.topic}[${d.origin.partition}]@${d.origin.offset}` },
    { header: 'Reason', cell: (d) => d.reason },
    {
      header: 'Actions',
      cell: (d) => (
        <>
          <button
            type="button"
            onClick={() => ok(client.GET('/dead-letters/{id}', { params: { path: { id: d.id } } })).then(setOpen)}
            aria-label={`Show dead letter ${d.id}`}
          >
            Show
          </button>{' '}
          {d.status === 'dead' && (
            <>
              <button type="button" onClick={() => act(d.id, 'redrive')} aria-label={`Redrive dead letter ${d.id}`}>
                Redrive
              </button>{' '}
              <button type="button" onClick={() => act(d.id, 'discard')} aria-label={`Discard dead letter ${d.id}`}>
                Discard
              </button>
            </>
          )}
        </>
      ),
    },
  ];
  return (
    <>
      <h1>Dead letters</h1>
      <form aria-label="Filter dead letters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Status
          <select value={status} onChange={(e) => navigate(`/dead-letters?status=${e.target.value}`)}>
            {['dead', 'redriving', 'redriven', 'discarded'].map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
      </form>
      <Notice note={message} />
      {page && (
        <PagedTable
          columns={columns}
          rows={page.items}
          rowKey={(d) => d.id}
          empty={<>No dead letter is {status}.</>}
          pager={{
            cursor: page.nextCursor,
            to: (cursor) => `/dead-letters${query({ status, cursor })}`,
            label: 'Older',
          }}
        />
      )}
      {open && (
        <section aria-label={`Dead letter ${open.id}`}>
          <h2>Dead letter {open.id}</h2>
          <p>{open.reason}</p>
          <h3>Value</h3>
          <pre>{open.value}</pre>
          <h3>Headers</h3>
          <pre>{JSON.stringify(open.headers, null, 2)}</pre>
        </section>
      )}
    </>
  );
}
