// plant-store send: post a New Plant webhook, as a sender would.
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import type { Schema } from '@app/api-client';
import { postWebhook } from '../api';
import { integer } from '../arguments';
import { readToken } from '../credentials';
import { using } from '../program';

export function registerSend(program: Command) {
  const { opts, print } = using(program);
  program
    .command('send')
    .description('post a New Plant webhook (with PLANT_STORE_WEBHOOK_TOKEN), as a sender would')
    .option('--webhook-token-file <path>', 'read the webhook token from this file (else PLANT_STORE_WEBHOOK_TOKEN)')
    .option('--webhook-token <token>', 'the token itself: shown in the process list, prefer the file or variable')
    .option('--id <id>', 'plant id (default: a random one)', integer)
    .option('--name <name>', 'plant name', 'Test plant')
    .option('--tag <tag>')
    .option('--webhook-id <key>', 'idempotency key (default: a new one, so a resend is a new webhook)')
    .action(
      async (o: {
        webhookTokenFile?: string;
        webhookToken?: string;
        id?: number;
        name: string;
        tag?: string;
        webhookId?: string;
      }) => {
        const token = readToken({
          flag: 'webhook-token',
          value: o.webhookToken,
          file: o.webhookTokenFile,
          variable: 'PLANT_STORE_WEBHOOK_TOKEN',
        });
        const plant: Schema<'NewPlant'> = {
          id: o.id ?? Math.floor(Math.random() * 1e9) + 1,
          name: o.name,
          ...(o.tag ? { tag: o.tag } : {}),
        };
        const key = o.webhookId ?? `msg_${randomUUID()}`;
        const res = await postWebhook({ url: opts().url, token, tokenVariable: 'PLANT_STORE_WEBHOOK_TOKEN' }, plant, {
          'webhook-id': key,
        });
        // The webhook's answer is not in the document (a sender needs only the 200): shown as the gateway sent it.
        print(
          { ...res, plant, webhookId: key },
          () => `accepted plant ${plant.id} as event ${res.eventId} (webhook-id ${key})`,
        );
      },
    );
}
