import { FormEvent, useCallback, useEffect, useState } from 'react';
import { ErrorNotice } from '../Notice';
import { client, ok, Schema } from '../api';
import { copyText } from '../copy';
import { Column, Table } from '../components/Table';

type PortalLink = Schema<'PortalLink'>;
type Issued = Schema<'PortalLinkWithToken'>;

const LIFETIMES: [string, string][] = [
  [String(3_600), '1 hour'],
  [String(86_400), '1 day'],
  [String(7 * 86_400), '7 days'],
  [String(30 * 86_400), '30 days'],
];

/**
 * An admin's part of a subscriber's portal: make a link (its URL shown once), see every link with its state and
 * last use, revoke one. The subscriber opens the URL and sees this subscription alone (see Portal.tsx).
 */
export function PortalLinks({ id }: { id: string }) {
  const [links, setLinks] = useState<PortalLink[]>([]);
  const [issued, setIssued] = useState<Issued | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [lifetime, setLifetime] = useState(String(7 * 86_400));
  const [forWhom, setForWhom] = useState('');
  const [copied, setCopied] = useState(false);
  const path = { params: { path: { id } } };
  const load = useCallback(
    () => ok(client.GET('/subscriptions/{id}/portal-links', path)).then(setLinks, (e: Error) => setError(e.message)),
    [id],
  );
  useEffect(() => void load(), [load]);
  const create = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      const body = { lifetimeSeconds: Number(lifetime), ...(forWhom ? { description: forWhom } : {}) };
      setIssued(await ok(client.POST('/subscriptions/{id}/portal-links', { ...path, body })));
      setCopied(false);
      setForWhom('');
      await load();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const revoke = async (linkId: string) => {
    setError(null);
    try {
      await ok(client.DELETE('/subscriptions/{id}/portal-links/{linkId}', { params: { path: { id, linkId } } }));
      await load();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const columns: Column<PortalLink>[] = [
    { header: 'For', cell: (l) => l.description ?? l.id.slice(0, 8) },
    { header: 'State', cell: (l) => (l.state === 'revoked' ? `revoked by ${l.revokedBy ?? 'an admin'}` : l.state) },
    { header: 'Expires', cell: (l) => l.expiresAt },
    { header: 'Last used', cell: (l) => l.lastUsedAt ?? 'never' },
    { header: 'Created by', cell: (l) => l.createdBy },
    {
      header: 'Actions',
      cell: (l) =>
        l.state === 'active' && (
          <button
            type="button"
            aria-label={`Revoke the link for ${l.description ?? l.id.slice(0, 8)}`}
            onClick={() => revoke(l.id)}
          >
            Revoke
          </button>
        ),
    },
  ];
  return (
    <section aria-labelledby="portal-links">
      <h2 id="portal-links">Portal links</h2>
      <p>
        A portal link lets the subscriber see this subscription&apos;s deliveries (every attempt, what was sent), send a
        test, rotate the secret, retry failures, change its URL and disable or enable it, by itself, and nothing else,
        until the link expires or is revoked.
      </p>
      <form onSubmit={create} aria-label="New portal link">
        <label>
          Valid for
          <select value={lifetime} onChange={(e) => setLifetime(e.target.value)}>
            {LIFETIMES.map(([seconds, label]) => (
              <option key={seconds} value={seconds}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Who it is for
          <input value={forWhom} onChange={(e) => setForWhom(e.target.value)} maxLength={500} />
        </label>
        <button className="primary" type="submit">
          Create a portal link
        </button>
      </form>
      {issued && (
        <div className="notice" role="status">
          <p>
            Portal link, valid until {issued.expiresAt}: <code data-testid="portal-url">{issued.url}</code>
          </p>
          <p>
            <strong>Copy it now: you will not see it again.</strong> Whoever holds it sees and manages this
            subscription; send it to the subscriber only.
          </p>
          <button
            type="button"
            onClick={() =>
              copyText(issued.url).then(
                () => setCopied(true),
                () => setCopied(false),
              )
            }
          >
            {copied ? 'Copied' : 'Copy link'}
          </button>{' '}
          <button type="button" onClick={() => setIssued(null)}>
            I have sent it
          </button>
        </div>
      )}
      <ErrorNotice text={error} />
      {links.length > 0 && <Table columns={columns} rows={links} rowKey={(l) => l.id} />}
    </section>
  );
}
