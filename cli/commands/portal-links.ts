// plant-store subscriptions portal-link: a subscriber's own page for one subscription (create, list, revoke).
import { type Command, InvalidArgumentError } from 'commander';
import type { Schema } from '@app/api-client';
import { ms } from '../arguments';
import { using } from '../program';
import { type Column, details, table } from '../table';

const PORTAL_LINK_COLUMNS: Column<Schema<'PortalLink'>>[] = [
  ['id', 'ID', 36],
  ['state', 'STATE'],
  ['expiresAt', 'EXPIRES', 24],
  ['lastUsedAt', 'LAST USED', 24],
  ['createdBy', 'BY', 20],
  ['description', 'DESCRIPTION', 30],
];

/** Registers the portal-link group under the subscriptions command. */
export function registerPortalLinks(program: Command, subscriptions: Command) {
  const { admin, print } = using(program);
  const portalLinks = subscriptions
    .command('portal-link')
    .description("a subscriber's own page for one subscription: create, list, revoke");
  portalLinks
    .command('create')
    .description('a link that opens the console for this subscription alone (shown once)')
    .argument('<subscription-id>')
    .option('--lifetime <age>', 'how long it works: 1m to 30d (default 7d)', (v) => {
      if (!/^\d+[smhd]$/.test(v)) throw new InvalidArgumentError('an age like 30m, 12h, 7d');
      return Math.round(ms(v) / 1000);
    })
    .option('--description <text>', 'who it is for')
    .action(async (id: string, o: { lifetime?: number; description?: string }) =>
      print(
        await admin()((c) =>
          c.POST('/subscriptions/{id}/portal-links', {
            params: { path: { id } },
            body: { lifetimeSeconds: o.lifetime, description: o.description },
          }),
        ),
        (d) =>
          `${details(d)}\n\nSend the subscriber the url: it is shown this once, and anyone holding it sees and manages ` +
          `this subscription until ${d.expiresAt} (revoke it with: subscriptions portal-link revoke ${id} ${d.id}).`,
      ),
    );
  portalLinks
    .command('list')
    .description("a subscription's links, revoked and expired ones too (never their tokens)")
    .argument('<subscription-id>')
    .action(async (id: string) =>
      print(await admin()((c) => c.GET('/subscriptions/{id}/portal-links', { params: { path: { id } } })), (d) =>
        table(d, PORTAL_LINK_COLUMNS),
      ),
    );
  portalLinks
    .command('revoke')
    .description('refuse the link from now on')
    .argument('<subscription-id>')
    .argument('<link-id>')
    .action(async (id: string, linkId: string) =>
      print(
        await admin()((c) =>
          c.DELETE('/subscriptions/{id}/portal-links/{linkId}', { params: { path: { id, linkId } } }),
        ),
        (d) => details(d),
      ),
    );
}
