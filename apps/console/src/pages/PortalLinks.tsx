import { FormEvent, useCallback, useEffect, useState } from 'react';
import { ErrorNotice } from '../Notice';
import { client, ok, Schema } from '../api';
import { copyText } from '../copy';

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
      {links.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">For</th>
              <th scope="col">State</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">Created by</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {links.map((l) => (
              <tr key={l.id}>
                <td>{l.description ?? l.id.slice(0, 8)}</td>
                <td>{l.state === 'revoked' ? `revoked by ${l.revokedBy ?? 'an admin'}` : l.state}</td>
                <td>{l.expiresAt}</td>
                <td>{l.lastUsedAt ?? 'never'}</td>
                <td>{l.createdBy}</td>
                <td>
                  {l.state === 'active' && (
                    <button
                      type="button"
                      aria-label={`Revoke the link for ${l.description ?? l.id.slice(0, 8)}`}
                      onClick={() => revoke(l.id)}
                    >
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
