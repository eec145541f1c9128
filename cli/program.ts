// The root command and what every command group shares through it: the global options (the gateway, the admin
// token, --json), the admin API with the operator's token, and print (tables, or JSON with --json).
import { Command, Option } from 'commander';
import { adminApi } from './api';
import { readToken } from './credentials';
import { asJson, writeErr, writeOut } from './output';

export interface GlobalOptions {
  url: string;
  adminToken?: string;
  adminTokenFile?: string;
  json?: boolean;
}

/** `plant-store` with its global options; the command groups (commands/) register themselves on it. */
export function createProgram(): Command {
  return (
    new Command('plant-store')
      .description('Operate a Plant Store: subscriptions, deliveries, dead letters, and test webhooks')
      .addOption(new Option('--url <url>', 'the gateway').env('PLANT_STORE_URL').default('http://127.0.0.1:3000'))
      // The token: PLANT_STORE_ADMIN_TOKEN, or a file. The flag is kept for scripts that use it, with a warning.
      .option('--admin-token-file <path>', 'read the admin token (read or write scope) from this file (- for stdin)')
      .option('--admin-token <token>', 'the admin token itself: shown in the process list, prefer the file or variable')
      .option('--json', 'print JSON (for scripts) instead of tables')
      .showHelpAfterError('(add --help for usage)')
      // Its help and its complaints quote what was typed: written the way every other output is (output.ts).
      .configureOutput({ writeOut, writeErr })
      .exitOverride()
  );
}

/** What a command group's actions reach through the root command: its options, the admin API, print. */
export function using(program: Command) {
  const opts = () => program.opts<GlobalOptions>();
  /** The admin API with the operator's token (read now: a token file is read, or warned about, once per call). */
  const admin = () =>
    adminApi({
      url: opts().url,
      token: readToken({
        flag: 'admin-token',
        value: opts().adminToken,
        file: opts().adminTokenFile,
        variable: 'PLANT_STORE_ADMIN_TOKEN',
      }),
      tokenVariable: 'PLANT_STORE_ADMIN_TOKEN',
    });

  /** Prints the JSON, or the human form (each through output.ts: what others wrote is shown, never obeyed). */
  function print<T>(data: T, human: (d: T) => string) {
    writeOut(`${opts().json ? asJson(data) : human(data)}\n`);
  }

  return { opts, admin, print };
}
