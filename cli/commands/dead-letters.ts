// plant-store dead-letters (dlq): list, show, redrive, discard.
import { type Command, Option } from 'commander';
import type { Schema } from '@app/api-client';
import { EXIT, type Query } from '../api';
import { integer } from '../arguments';
import { using } from '../program';
import { type Column, details } from '../table';
import { pageOf } from '../views';

const DEAD_LETTER_COLUMNS: Column<Schema<'DeadLetter'>>[] = [
  ['id', 'ID'],
  ['status', 'STATUS'],
  ['deadLetteredAt', 'AT', 24],
  ['key', 'KEY', 20],
  ['origin.topic', 'TOPIC', 20],
  ['origin.partition', 'PART'],
  ['origin.offset', 'OFFSET'],
  ['reason', 'REASON', 60],
];
const DEAD_LETTER_STATUSES = [
  'dead',
  'redriving',
  'redriven',
  'discarded',
] satisfies Query<'listDeadLetters'>['status'][];

export function registerDeadLetters(program: Command) {
  const { admin, print } = using(program);
  const deadLetters = program.command('dead-letters').alias('dlq').description('list, show, redrive, discard');
  deadLetters
    .command('list')
    .description('newest first')
    .addOption(new Option('--status <status>').choices(DEAD_LETTER_STATUSES))
    .option('--limit <n>', '1 to 500', integer)
    .option('--cursor <cursor>')
    .action(async (o: { status?: Query<'listDeadLetters'>['status']; limit?: number; cursor?: string }) =>
      print(
        await admin()((c) =>
          c.GET('/dead-letters', { params: { query: { status: o.status, limit: o.limit, cursor: o.cursor } } }),
        ),
        (d) => pageOf(d, DEAD_LETTER_COLUMNS),
      ),
    );
  deadLetters
    .command('show')
    .description('a dead letter with its original value and headers')
    .argument('<id>')
    .action(async (id: string) =>
      print(await admin()((c) => c.GET('/dead-letters/{id}', { params: { path: { id } } })), (d) => details(d)),
    );
  for (const [name, verb] of [
    ['redrive', 'republish to plant.created (after fixing the cause)'],
    ['discard', 'mark discarded'],
  ] as const)
    deadLetters
      .command(name)
      .description(`${verb}: one or many`)
      .argument('<ids...>')
      .action(async (ids: string[]) => {
        const result = await admin()((c) => c.POST(`/dead-letters/${name}`, { body: { ids } }));
        print(result, (d) =>
          [
            `${name === 'redrive' ? 'redriven' : 'discarded'}: ${d.done.join(', ') || 'none'}`,
            ...d.skipped.map((s) => `left as it was: ${s.id} (${s.status})`),
          ].join('\n'),
        );
        if (result.done.length < ids.length) process.exitCode = EXIT.refused;
      });
}
