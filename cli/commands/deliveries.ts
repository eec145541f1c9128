// plant-store deliveries: list, show, retry, recover.
import { type Command, Option } from 'commander';
import type { Schema } from '@app/api-client';
import { EXIT, type Query } from '../api';
import { integer, time } from '../arguments';
import { writeErr } from '../output';
import { using } from '../program';
import { type Column, details, table } from '../table';
import { exchange, pageOf } from '../views';

const DELIVERY_COLUMNS: Column<Schema<'Delivery'>>[] = [
  ['id', 'ID', 36],
  ['subscriptionId', 'SUBSCRIPTION', 36],
  ['eventType', 'TYPE', 28],
  ['plantId', 'PLANT'],
  ['status', 'STATUS'],
  ['attempts', 'ATTEMPTS'],
  ['nextAttemptAt', 'NEXT ATTEMPT', 24],
  ['createdAt', 'CREATED', 24],
];
const ATTEMPT_COLUMNS: Column<Schema<'DeliveryAttempt'>>[] = [
  ['attemptedAt', 'AT', 24],
  ['status', 'STATUS'],
  ['latencyMs', 'MS'],
  ['error', 'ERROR', 40],
  ['responseBody', 'RESPONSE', 40],
];
const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] satisfies Query<'listDeliveries'>['status'][];

export function registerDeliveries(program: Command) {
  const { opts, admin, print } = using(program);
  const deliveries = program.command('deliveries').description('list, show, retry, recover');
  deliveries
    .command('list')
    .description('newest first')
    .option('--subscription <id>')
    .addOption(new Option('--status <status>').choices(DELIVERY_STATUSES))
    .option('--plant <id>', 'plant id', integer)
    .option('--since <time>', 'created at or after (RFC 3339, or an age: 30m, 2h, 1d)', time)
    .option('--until <time>', 'created before', time)
    .option('--limit <n>', '1 to 500', integer)
    .option('--cursor <cursor>', 'the next page, as the previous one said')
    .action(
      async (o: {
        subscription?: string;
        status?: Query<'listDeliveries'>['status'];
        plant?: number;
        since?: string;
        until?: string;
        limit?: number;
        cursor?: string;
      }) =>
        print(
          await admin()((c) =>
            c.GET('/deliveries', {
              params: {
                query: {
                  subscriptionId: o.subscription,
                  status: o.status,
                  plantId: o.plant,
                  since: o.since,
                  until: o.until,
                  limit: o.limit,
                  cursor: o.cursor,
                },
              },
            }),
          ),
          (d) => pageOf(d, DELIVERY_COLUMNS),
        ),
    );
  deliveries
    .command('show')
    .description('a delivery with every attempt')
    .argument('<id>')
    .action(async (id: string) =>
      print(await admin()((c) => c.GET('/deliveries/{id}', { params: { path: { id } } })), (d) => {
        const { attemptLog, request, ...delivery } = d;
        return `${details(delivery)}\n\n${exchange(request)}\n\n${table(attemptLog, ATTEMPT_COLUMNS)}`;
      }),
    );
  deliveries
    .command('retry')
    .description('send a failed delivery again now')
    .argument('<id>')
    .action(async (id: string) =>
      print(await admin()((c) => c.POST('/deliveries/{id}/retry', { params: { path: { id } } })), (d) => details(d)),
    );
  deliveries
    .command('recover')
    .description(
      'send every failed delivery again: of a subscription, a plant, a time range (at least one); with --all, every ' +
        'delivery of a subscription since a time, those that succeeded too',
    )
    .option('--subscription <id>')
    .option('--plant <id>', 'plant id', integer)
    .requiredOption('--since <time>', 'created at or after (RFC 3339, or an age: 30m, 2h, 1d)', time)
    .option('--until <time>', 'created before', time)
    .option(
      '--all',
      'every New Plant delivery of --subscription whose event is at or after --since, not only the failed ones ' +
        '(the same webhook-id; a plant whose newer version went meanwhile is not sent an older one)',
    )
    .action(async (o: { subscription?: string; plant?: number; since: string; until?: string; all?: boolean }) => {
      if (!o.all)
        return print(
          await admin()((c) =>
            c.POST('/deliveries/retry', {
              body: { subscriptionId: o.subscription, plantId: o.plant, since: o.since, until: o.until },
            }),
          ),
          (d) => `${d.requeued} failed deliveries re-queued`,
        );
      if (!o.subscription || o.plant !== undefined || o.until !== undefined)
        program.error(
          'plant-store: --all replays one subscription since a time: give --subscription, not --plant or --until',
          {
            exitCode: EXIT.usage,
            code: 'commander.usage',
          },
        );
      // The API bounds each call (see recoverSubscription): go on with its cursor until it is complete.
      let requeued = 0;
      let cursor: string | undefined;
      for (;;) {
        const d = await admin()((c) =>
          c.POST('/subscriptions/{id}/recover', {
            params: { path: { id: o.subscription! }, query: { since: o.since, status: 'all', cursor } },
          }),
        );
        requeued += d.requeued;
        if (d.complete || !d.cursor) return print({ ...d, requeued }, () => `${requeued} deliveries re-queued`);
        if (!opts().json) writeErr(`${requeued} deliveries re-queued so far, going on\n`);
        cursor = d.cursor;
      }
    });
}
