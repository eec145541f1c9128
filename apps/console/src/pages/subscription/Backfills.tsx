import { FormEvent, useCallback, useEffect, useState } from 'react';
import { Note, Notice } from '../../Notice';
import { client, ok, Schema } from '../../api';
import { Column, Table } from '../../components/Table';

type Backfill = Schema<'Backfill'>;

/**
 * Backfills: send the receiver the current state of every plant it would receive (or those changed since a time),
 * with the progress of each, refreshed while one runs; a running one can be cancelled.
 */
export function Backfills({ id }: { id: string }) {
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
  const columns: Column<Backfill>[] = [
    { header: 'Started', cell: (b) => new Date(b.createdAt).toLocaleString() },
    { header: 'State', cell: (b) => b.state },
    {
      header: 'Progress',
      cell: (b) => (
        <>
          <progress
            value={b.sent}
            max={Math.max(b.total, b.sent, 1)}
            aria-label={`${b.sent} of ${b.total} plants sent`}
          />{' '}
          {b.sent} of {b.total}
        </>
      ),
    },
    { header: 'Superseded', cell: (b) => b.superseded },
    {
      header: 'Action',
      cell: (b) =>
        b.state === 'running' && (
          <button type="button" onClick={() => void cancel(b.id)}>
            Cancel
          </button>
        ),
    },
  ];
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
        <Table caption="Backfills, newest first" columns={columns} rows={items} rowKey={(b) => b.id} />
      )}
    </>
  );
}
