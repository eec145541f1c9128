import { FormEvent, useState } from 'react';
import { ErrorNotice } from '../Notice';
import { ApiError, client, ok, token } from '../api';

/** The operator pastes an admin token; it is checked against the admin API and kept for this tab only. */
export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      await ok(client.GET('/overview', { headers: { authorization: `Bearer ${value.trim()}` } }));
      token.set(value.trim());
      onSignedIn();
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401
          ? `That is not an admin token: the console needs one of ADMIN_TOKENS (a webhook token only sends plants). ${err.message}`
          : (err as Error).message,
      );
    }
  };
  return (
    <main className="signin">
      <h1>Plant Store console</h1>
      <form onSubmit={submit}>
        <label>
          Admin token
          <input type="password" autoComplete="off" value={value} onChange={(e) => setValue(e.target.value)} required />
        </label>
        <button className="primary" type="submit">
          Sign in
        </button>
      </form>
      <p>The token stays in this tab only and is sent to this gateway's admin API, nowhere else.</p>
      <ErrorNotice text={error} />
    </main>
  );
}
