// plant-store subscriptions (subs): list, show, create, limit, rotate, test, disable, headers; and its portal-link
// group (portal-links.ts).
import { type Command, InvalidArgumentError } from 'commander';
import type { Schema } from '@app/api-client';
import { OPERATIONAL_EVENT_TYPES } from '@app/contracts/operational-events';
import { ApiError, EXIT } from '../api';
import { collect, header, integer, limit, list } from '../arguments';
import { readToken } from '../credentials';
import { using } from '../program';
import { type Column, details, table } from '../table';
import { exchange } from '../views';
import { registerPortalLinks } from './portal-links';

/** Secret headers from --secret-header (warned: the process list shows it) and --secret-header-file (one each). */
const secretHeaders = (o: { secretHeader?: Record<string, string>; secretHeaderFile?: string[] }) => {
  let out = o.secretHeader;
  if (out) readToken({ flag: 'secret-header', value: 'given' }); // only for its warning
  for (const file of o.secretHeaderFile ?? []) out = header(readToken({ flag: 'secret-header', file })!, out);
  return out;
};
const headerOptions = (c: Command) =>
  c
    .option('--header <name:value>', 'a header to send with each delivery (repeatable)', header)
    .option('--secret-header <name:value>', 'a secret one (never shown again): prefer the file', header)
    .option('--secret-header-file <path>', "a secret header, 'Name: value', read from this file (repeatable)", collect);

const SUBSCRIPTION_COLUMNS: Column<Schema<'Subscription'>>[] = [
  ['id', 'ID', 36],
  ['url', 'URL', 50],
  ['kind', 'KIND'],
  ['enabled', 'ENABLED'],
  ['disabledReason', 'DISABLED BECAUSE', 30],
  ['pausedUntil', 'PAUSED UNTIL', 24],
  ['filter', 'FILTER', 40],
  ['eventTypes', 'EVENT TYPES', 40],
  ['description', 'DESCRIPTION', 30],
];

export function registerSubscriptions(program: Command) {
  const { admin, print } = using(program);
  const subscriptions = program
    .command('subscriptions')
    .alias('subs')
    .description('list, show, create, limit, rotate, test, disable, headers');
  subscriptions
    .command('list')
    .description('every subscription')
    .action(async () => print(await admin()((c) => c.GET('/subscriptions')), (d) => table(d, SUBSCRIPTION_COLUMNS)));
  headerOptions(
    subscriptions
      .command('create')
      .description(
        "subscribe a URL to New Plant webhooks, or with --operational to Plant Store's own events (the signing " +
          'secret is shown once)',
      )
      .argument('<url>', 'where to send them')
      .option('--subscriber-token-file <path>', 'a token to send it as Authorization: Bearer, read from this file')
      .option('--subscriber-token <token>', 'the token itself: shown in the process list, prefer the file')
      .option('--description <text>')
      .option('--asymmetric', 'sign with Ed25519 (v1a) instead of a shared secret')
      .option('--tags <tags>', 'only plants with one of these tags (comma-separated)', list)
      .option('--min-id <id>', 'only plant ids from this one', integer)
      .option('--max-id <id>', 'only plant ids up to this one', integer)
      .option('--operational', `operational events instead of plants: ${OPERATIONAL_EVENT_TYPES.join(', ')}`)
      .option(
        '--event-types <types>',
        'with --operational: only these event types (comma-separated; default all)',
        list,
      )
      .option(
        '--max-per-second <n>',
        'at most n deliveries a second to it, across worker replicas (0.5: one every 2 s)',
        limit,
      )
      .option('--max-concurrency <n>', 'at most n requests to it at once, across worker replicas', limit)
      .option(
        '--destination-file <path>',
        "a broker URL's settings as JSON (docs/destinations.md: tls ca/cert/key, sasl mechanism, maxLen)",
      ),
  ).action(
    async (
      url: string,
      o: {
        operational?: boolean;
        eventTypes?: string[];
        subscriberTokenFile?: string;
        subscriberToken?: string;
        description?: string;
        asymmetric?: boolean;
        tags?: string[];
        minId?: number;
        maxId?: number;
        maxPerSecond?: number | null;
        maxConcurrency?: number | null;
        header?: Record<string, string>;
        secretHeader?: Record<string, string>;
        secretHeaderFile?: string[];
        destinationFile?: string;
      },
    ) => {
      const range = o.minId !== undefined || o.maxId !== undefined ? { min: o.minId, max: o.maxId } : undefined;
      const filter =
        o.tags || range ? { ...(o.tags ? { tags: o.tags } : {}), ...(range ? { plantIds: range } : {}) } : undefined;
      const api = admin();
      const body: Schema<'SubscriptionCreate'> = {
        url,
        token: readToken({ flag: 'subscriber-token', value: o.subscriberToken, file: o.subscriberTokenFile }),
        description: o.description,
        signature: o.asymmetric ? 'asymmetric' : undefined,
        filter,
        // Checked by the API (422 naming the field), as every other value here.
        kind: o.operational ? 'operational' : undefined,
        eventTypes: o.eventTypes as Schema<'SubscriptionCreate'>['eventTypes'],
        maxDeliveriesPerSecond: o.maxPerSecond ?? undefined,
        maxConcurrency: o.maxConcurrency ?? undefined,
        headers: o.header,
        secretHeaders: secretHeaders(o),
        destination: o.destinationFile ? readJsonFile(o.destinationFile, 'destination-file') : undefined,
      };
      const created = await api((c) => c.POST('/subscriptions', { body }));
      print(
        created,
        (d) =>
          `${details(d)}\n\n${d.secret ? 'Keep the secret now: it is not shown again.' : 'Receivers verify v1a signatures with the publicKey above.'}`,
      );
    },
  );
  headerOptions(
    subscriptions
      .command('headers')
      .description('set or remove the headers sent with each delivery (the others stay)')
      .argument('<id>')
      .option('--remove <name>', 'remove this header, plain or secret (repeatable)', collect),
  ).action(
    async (
      id: string,
      o: {
        header?: Record<string, string>;
        secretHeader?: Record<string, string>;
        secretHeaderFile?: string[];
        remove?: string[];
      },
    ) => {
      const removed = Object.fromEntries((o.remove ?? []).map((n) => [n, null]));
      const body: Schema<'SubscriptionUpdate'> = { headers: { ...removed, ...o.header } };
      const secret = secretHeaders(o);
      if (secret) body.secretHeaders = secret;
      print(await admin()((c) => c.PATCH('/subscriptions/{id}', { params: { path: { id } }, body })), (d) =>
        details(d),
      );
    },
  );
  subscriptions
    .command('rotate')
    .description('a new signing secret (the old one keeps signing beside it for 24 h)')
    .argument('<id>')
    .action(async (id: string) =>
      print(await admin()((c) => c.POST('/subscriptions/{id}/rotate-secret', { params: { path: { id } } })), (d) =>
        details(d),
      ),
    );
  subscriptions
    .command('test')
    .description(
      'send it a signed test New Plant (an example event to an operational one) now and show what came back ' +
        '(exit 1 unless it answered 2xx)',
    )
    .argument('<id>')
    .option('--event-type <type>', 'operational: the event type to send an example of (default: the first it takes)')
    .option('--plant <json>', 'the plant to send, as JSON (default: a sample plant)', (v): Schema<'NewPlant'> => {
      try {
        // Whatever it holds, the API checks it against the schema and says what is wrong.
        return JSON.parse(v);
      } catch {
        throw new InvalidArgumentError('a JSON object, like \'{"id": 1, "name": "Fern"}\'');
      }
    })
    .action(async (id: string, o: { plant?: Schema<'NewPlant'>; eventType?: string }) => {
      const body: Schema<'SubscriptionTest'> = {
        ...(o.plant ? { plant: o.plant } : {}),
        ...(o.eventType ? { eventType: o.eventType as Schema<'SubscriptionTest'>['eventType'] } : {}),
      };
      const r = await admin()((c) => c.POST('/subscriptions/{id}/test', { params: { path: { id } }, body }));
      print(r, (d) => {
        const res = d.response;
        // A broker has no status: no error is its yes, and what it answered is the body.
        const answer =
          res.status !== null ? `HTTP ${res.status}` : res.error ? `no answer: ${res.error}` : 'taken by the broker';
        return `${exchange(d.request)}\n\n${answer} after ${res.latencyMs} ms${res.body ? `\n${res.body}` : ''}`;
      });
      if (!r.succeeded) process.exitCode = EXIT.refused;
    });
  subscriptions
    .command('disable')
    .description('stop sending to it (--enable to resume)')
    .argument('<id>')
    .option('--enable', 'enable it again instead')
    .action(async (id: string, o: { enable?: boolean }) =>
      print(
        await admin()((c) =>
          c.PATCH('/subscriptions/{id}', { params: { path: { id } }, body: { enabled: Boolean(o.enable) } }),
        ),
        (d) => details(d),
      ),
    );

  subscriptions
    .command('show')
    .description('one subscription: its settings, limits, pause and circuit breaker')
    .argument('<id>')
    .action(async (id: string) =>
      print(await admin()((c) => c.GET('/subscriptions/{id}', { params: { path: { id } } })), (d) => details(d)),
    );
  subscriptions
    .command('limit')
    .description(
      "set or remove its flow control: the rate and the requests at once it gets (see its circuit with 'show')",
    )
    .argument('<id>')
    .option('--max-per-second <n|none>', 'at most n deliveries a second, across worker replicas; none: no limit', limit)
    .option('--max-concurrency <n|none>', 'at most n requests at once, across worker replicas; none: no limit', limit)
    .action(async (id: string, o: { maxPerSecond?: number | null; maxConcurrency?: number | null }) => {
      if (o.maxPerSecond === undefined && o.maxConcurrency === undefined)
        throw new InvalidArgumentError('give --max-per-second, --max-concurrency or both');
      const body: Schema<'SubscriptionUpdate'> = {
        ...(o.maxPerSecond !== undefined ? { maxDeliveriesPerSecond: o.maxPerSecond } : {}),
        ...(o.maxConcurrency !== undefined ? { maxConcurrency: o.maxConcurrency } : {}),
      };
      print(await admin()((c) => c.PATCH('/subscriptions/{id}', { params: { path: { id } }, body })), (d) =>
        details(d),
      );
    });
  registerPortalLinks(program, subscriptions);
}

/** A JSON file's content (it may hold a client key: read, and warned about, as a token file is). */
function readJsonFile<T>(path: string, flag: string): T {
  const text = readToken({ flag: flag.replace(/-file$/, ''), file: path })!;
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new ApiError(`--${flag}: ${path} is not JSON (${(err as Error).message})`, EXIT.usage);
  }
}
