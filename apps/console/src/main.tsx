import { StrictMode, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { PORTAL, token } from './api';
import { Portal } from './Portal';
import { Link, navigate, usePath } from './router';
import { SignIn } from './pages/SignIn';
import { Overview } from './pages/Overview';
import { Subscriptions } from './pages/Subscriptions';
import { SubscriptionPage } from './pages/subscription/SubscriptionPage';
import { Deliveries, DeliveryPage } from './pages/Deliveries';
import { PlantPage, Plants } from './pages/Plants';
import { DeadLetters } from './pages/DeadLetters';
import './styles.css';

const NAV: [string, string][] = [
  ['/', 'Overview'],
  ['/subscriptions', 'Subscriptions'],
  ['/deliveries', 'Deliveries'],
  ['/plants', 'Plants'],
  ['/dead-letters', 'Dead letters'],
];

function App() {
  const [signedIn, setSignedIn] = useState(Boolean(token.get()));
  const path = usePath();
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  const [route, search] = path.split('?');
  const params = new URLSearchParams(search ?? '');
  const section = '/' + (route.split('/')[1] ?? '');
  return (
    <>
      <header>
        <span className="brand">Plant Store</span>
        <nav aria-label="Console">
          {NAV.map(([to, label]) => (
            <Link key={to} to={to} aria-current={section === to ? 'page' : undefined}>
              {label}
            </Link>
          ))}
        </nav>
        <button
          type="button"
          onClick={() => {
            token.clear();
            setSignedIn(false);
            navigate('/');
          }}
        >
          Sign out
        </button>
      </header>
      <main>
        {route === '/' && <Overview />}
        {route === '/subscriptions' && <Subscriptions />}
        {route.startsWith('/subscriptions/') && <SubscriptionPage id={route.split('/')[2]} />}
        {route === '/deliveries' && <Deliveries params={params} />}
        {route.startsWith('/deliveries/') && <DeliveryPage id={route.split('/')[2]} />}
        {route === '/plants' && <Plants params={params} />}
        {route.startsWith('/plants/') && <PlantPage id={route.split('/')[2]} />}
        {route === '/dead-letters' && <DeadLetters params={params} />}
        {!['/', '/subscriptions', '/deliveries', '/plants', '/dead-letters'].includes(section) && (
          <p>
            No such page. <Link to="/">Go to the overview</Link>.
          </p>
        )}
      </main>
    </>
  );
}

createRoot(document.getElementById('root')!).render(<StrictMode>{PORTAL ? <Portal /> : <App />}</StrictMode>);
