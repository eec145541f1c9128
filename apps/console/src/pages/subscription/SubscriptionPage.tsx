import { useCallback, useEffect, useState } from 'react';
import { Note, Notice } from '../../Notice';
import { client, ok, PORTAL } from '../../api';
import { Link } from '../../router';
import { PortalLinks } from '../PortalLinks';
import { describeReceives, SecretOnce, Subscription } from '../Subscriptions';
import { Backfills } from './Backfills';
import { Destination } from './Destination';
import { EditForm } from './EditForm';
import { Health } from './Health';
import { Replay } from './Replay';
import { TestSend } from './TestSend';

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
      <Destination s={s} />
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
