import { AnchorHTMLAttributes, MouseEvent, useEffect, useState } from 'react';
import { PORTAL } from './api';

// Every page has a URL of its own under /console (shareable, reloadable): the History API, no router library.
// In portal mode every page is under /console/portal, so the same links stay in the subscriber's pages.
const BASE = PORTAL ? '/console/portal' : '/console';

export function usePath(): string {
  const [path, setPath] = useState(current());
  useEffect(() => {
    const update = () => setPath(current());
    window.addEventListener('popstate', update);
    return () => window.removeEventListener('popstate', update);
  }, []);
  return path;
}

function current(): string {
  const p = window.location.pathname.slice(BASE.length) || '/';
  return `${p}${window.location.search}`;
}

export function navigate(to: string) {
  window.history.pushState(null, '', `${BASE}${to}`);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

export function Link({ to, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    navigate(to);
  };
  return <a href={`${BASE}${to}`} onClick={onClick} {...rest} />;
}
