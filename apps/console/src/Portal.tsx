import { useEffect, useState } from 'react';
import { ApiError, client, ok, Schema, token } from './api';
import { Link, usePath } from './router';
import { SubscriptionPage } from './pages/subscription/SubscriptionPage';
import { Deliveries, DeliveryPage } from './pages/Deliveries';

type Session = Schema<'PortalSession'>;

/**
 * The link's token arrives in the URL's fragment (`/console/portal#token=…`), which the browser never sends to a
 * server: it is moved into this tab's sessionStorage and taken out of the address bar (and so out of the history,
 * bookmarks and anything shared from here) before anything else happens.
 */
function takeTokenFromFragment() {
  const fromFragment = new URLSearchParams(window.location.hash.slice(1)).get('token');
  if (fromFragment === null) return;
  token.set(fromFragment);
  window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}`);
}
takeTokenFromFragment();

/**
 * The subscriber's portal: one subscription (settings, test, secret, enable/disable) and its deliveries, through
 * the same API with the link's token, which the API confines to that subscription. Nothing else is linked, and
 * anything else the API refuses (403) with a message that the page shows.
 */
export function Portal() {
  const [session, setSession] = useState<Session | null>(null);
  const [refused, setRefused] = useState<string | null>(null);
  const path = usePath();
  useEffect(() => {
    if (!token.get()) {
      setRefused('This page needs a portal link: open the whole link you were sent (it ends with #token=…).');
      return;
    }
    ok(client.GET('/portal/session')).then(setSession, (e: Error) =>
      setRefused(
        e instanceof ApiError && e.status === 401 && e.problem.detail
          ? e.problem.detail
          : `The portal link could not be checked: ${e.message}`,
      ),
    );
  }, []);
  if (refused)
    return (
      <main className="signin">
        <h1>Plant Store subscriber portal</h1>
        <p role="alert" className="error">
          {refused}
        </p>
      </main>
    );
  if (!session) return <main aria-busy="true" />;
  const [route, search] = path.split('?');
  const params = new URLSearchParams(search ?? '');
  const deliveries = `/deliveries?subscriptionId=${session.subscriptionId}`;
  return (
    <>
      <header>
        <span className="brand">Plant Store subscriber portal</span>
        <nav aria-label="Portal">
          <Link to="/" aria-current={route === '/' ? 'page' : undefined}>
            Subscription
          </Link>
          <Link to={deliveries} aria-current={route.startsWith('/deliveries') ? 'page' : undefined}>
            Deliveries
          </Link>
        </nav>
        <span>Link valid until {session.expiresAt}</span>
        <button
          type="button"
          onClick={() => {
            token.clear();
            setSession(null);
            setRefused('Signed out: this tab forgot the link. Open it again to come back.');
          }}
        >
          Sign out
        </button>
      </header>
      <main>
        {route === '/' && <SubscriptionPage id={session.subscriptionId} />}
        {route === '/deliveries' && <Deliveries params={params} />}
        {route.startsWith('/deliveries/') && <DeliveryPage id={route.split('/')[2]} />}
        {route !== '/' && !route.startsWith('/deliveries') && (
          <p>
            No such page in the portal. <Link to="/">Go to your subscription</Link>.
          </p>
        )}
      </main>
    </>
  );
}
