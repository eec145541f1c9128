// `npx plant-store …`: the admin API from a terminal. PLANT_STORE_URL (default http://127.0.0.1:3000) and
// PLANT_STORE_ADMIN_TOKEN (or a file: PLANT_STORE_ADMIN_TOKEN_FILE, --admin-token-file); `send` uses
// PLANT_STORE_WEBHOOK_TOKEN (or its _FILE). Tokens on the command line warn (credentials.ts). Tables by default,
// --json for scripts. Every admin call goes through the typed client generated from the served document, so
// the paths, parameters, bodies and the columns of the command groups (commands/) are checked against it (`npx tsc`).
// Exit codes: 0 done, 1 the API refused (its reason printed), 2 a wrong command line, 3 unreachable or 5xx.
// Loaded by plant-store.js (the package's `bin`), which compiles it on the fly.
import { ApiError, EXIT } from './api';
import { registerBackfills } from './commands/backfills';
import { registerDeadLetters } from './commands/dead-letters';
import { registerDeliveries } from './commands/deliveries';
import { registerSend } from './commands/send';
import { registerSubscriptions } from './commands/subscriptions';
import { asJson, writeErr, writeOut } from './output';
import { createProgram, using } from './program';

const program = createProgram();
// In this order in --help.
registerSubscriptions(program);
registerBackfills(program);
registerDeliveries(program);
registerDeadLetters(program);
registerSend(program);
const { opts } = using(program);

async function main() {
  try {
    await program.parseAsync(process.argv);
  } catch (err) {
    if (err instanceof ApiError) {
      writeErr(`plant-store: ${err.message}\n`);
      if (opts().json && err.problem) writeOut(`${asJson(err.problem)}\n`);
      process.exitCode = err.exitCode;
      return;
    }
    const e = err as { code?: string; exitCode?: number; message: string };
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) {
      // --help and --version are not failures; every other complaint of the parser is a usage error.
      process.exitCode = e.code === 'commander.helpDisplayed' || e.code === 'commander.version' ? 0 : EXIT.usage;
      return;
    }
    writeErr(`plant-store: ${e.message}\n`);
    process.exitCode = EXIT.unavailable;
  }
}

void main();
