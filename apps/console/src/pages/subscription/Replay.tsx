import { FormEvent, useState } from 'react';
import { Note, Notice } from '../../Notice';
import { client, ok } from '../../api';

/**
 * Replay since a time: the failed deliveries (the default), or every delivery (those that succeeded too), sent again
 * with their webhook-id. A replay of everything goes on call after call (each bounded) until it is complete, saying
 * how many so far.
 */
export function Replay({ id }: { id: string }) {
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
