// plant-store backfills: send a subscriber the current state of every plant it would receive.
import type { Command } from 'commander';
import type { Schema } from '@app/api-client';
import { integer, time } from '../arguments';
import { using } from '../program';
import { type Column, details, table } from '../table';

const BACKFILL_COLUMNS: Column<Schema<'Backfill'>>[] = [
  ['id', 'ID', 36],
  ['state', 'STATE'],
  ['total', 'TOTAL'],
  ['sent', 'SENT'],
  ['pending', 'PENDING'],
  ['superseded', 'SUPERSEDED'],
  ['since', 'SINCE', 24],
  ['createdAt', 'CREATED', 24],
];
/** `sent of total` with a bar, for a terminal. */
const progress = (b: Schema<'Backfill'>) => {
  const done = b.total === 0 ? 1 : Math.min(1, b.sent / b.total);
  return `${details(b)}\n\n[${'#'.repeat(Math.round(done * 30)).padEnd(30, '.')}] ${b.sent} of ${b.total} sent, ${b.state}`;
};

export function registerBackfills(program: Command) {
  const { admin, print } = using(program);
  const backfills = program
    .command('backfills')
    .description('send a subscriber the current state of every plant it would receive: start, list, show, cancel');
  backfills
    .command('start')
    .description('plant-id order, marked plant-store-backfill, at --rate per second (one per subscription at a time)')
    .argument('<subscription>')
    .option('--since <time>', 'only plants changed since (RFC 3339, or an age: 30m, 2h, 1d)', time)
    .option('--rate <n>', 'deliveries per second, 1 to 1000 (default 50)', integer)
    .action(async (id: string, o: { since?: string; rate?: number }) =>
      print(
        await admin()((c) =>
          c.POST('/subscriptions/{id}/backfills', {
            params: { path: { id } },
            body: { since: o.since, ratePerSecond: o.rate },
          }),
        ),
        progress,
      ),
    );
  backfills
    .command('list')
    .description("a subscription's backfills, newest first")
    .argument('<subscription>')
    .action(async (id: string) =>
      print(await admin()((c) => c.GET('/subscriptions/{id}/backfills', { params: { path: { id } } })), (d) =>
        table(d, BACKFILL_COLUMNS),
      ),
    );
  backfills
    .command('show')
    .description('one backfill and its progress')
    .argument('<subscription>')
    .argument('<backfill>')
    .action(async (id: string, backfillId: string) =>
      print(
        await admin()((c) =>
          c.GET('/subscriptions/{id}/backfills/{backfillId}', { params: { path: { id, backfillId } } }),
        ),
        progress,
      ),
    );
  backfills
    .command('cancel')
    .description('stop it: nothing more is sent (those in flight finish)')
    .argument('<subscription>')
    .argument('<backfill>')
    .action(async (id: string, backfillId: string) =>
      print(
        await admin()((c) =>
          c.POST('/subscriptions/{id}/backfills/{backfillId}/cancel', { params: { path: { id, backfillId } } }),
        ),
        progress,
      ),
    );
}
