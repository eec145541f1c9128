import { useState } from 'react';
import { Note, Notice } from '../../Notice';
import { client, ok, Schema } from '../../api';
import { Exchange } from '../../Exchange';

type TestResult = Schema<'SubscriptionTestResult'>;

export function TestSend({ id, operational }: { id: string; operational: boolean }) {
  const [result, setResult] = useState<TestResult | null>(null);
  const [note, setNote] = useState<Note>(null);
  const [busy, setBusy] = useState(false);
  const send = async () => {
    setBusy(true);
    setNote(null);
    try {
      const r = await ok(client.POST('/subscriptions/{id}/test', { params: { path: { id } } }));
      setResult(r);
      // A broker has no status: its answer (an offset, a sequence) is the response body, or it failed with an error.
      const answer = r.response.status !== null ? `HTTP ${r.response.status}` : (r.response.error ?? r.response.body);
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
