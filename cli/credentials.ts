// Where the CLI takes a token from. A token on the command line is readable by every user of the machine (ps,
// /proc/<pid>/cmdline) and stays in the shell's history, so the flags that take one still work but warn; the
// environment or a file (`--…-token-file`, mode 600) keeps it out of both.
import fs from 'node:fs';
import { ApiError, EXIT } from './api';
import { writeErr } from './output';

export interface TokenSources {
  /** The option's name without dashes: `--<flag>` takes the token, `--<flag>-file` a file holding it. */
  flag: string;
  value?: string;
  file?: string;
  /** The environment variable (and `<variable>_FILE`), when there is one. */
  variable?: string;
  env?: NodeJS.ProcessEnv;
  warn?: (line: string) => void;
}

/**
 * The token, from (first found) the `--<flag>` value, the `--<flag>-file` file, then the `<variable>_FILE` and
 * `<variable>` environment variables.
 */
export function readToken({
  flag,
  value,
  file,
  variable,
  env = process.env,
  warn = stderrLine,
}: TokenSources): string | undefined {
  if (value) {
    warn(
      `warning: --${flag} puts the token in the process list and your shell history; ` +
        `use ${variable ? `${variable} or ` : ''}--${flag}-file instead`,
    );
    return value;
  }
  const path = file || (variable && env[`${variable}_FILE`]);
  if (path) return fromFile(path, file ? `--${flag}-file` : `${variable}_FILE`, warn);
  return (variable && env[variable]) || undefined;
}

function fromFile(path: string, source: string, warn: (line: string) => void): string {
  let text: string;
  try {
    // Group or world access: anyone else on the machine can read the token (ssh refuses such keys; we warn).
    if (path !== '-' && (fs.statSync(path).mode & 0o077) !== 0)
      warn(`warning: ${path} (${source}) can be read by other users: chmod 600 ${path}`);
    text = fs.readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (err) {
    throw new ApiError(`cannot read the token file ${path} (${source}): ${(err as Error).message}`, EXIT.unavailable);
  }
  const token = text.trim();
  if (!token) throw new ApiError(`the token file ${path} (${source}) is empty`, EXIT.unavailable);
  return token;
}

function stderrLine(line: string) {
  writeErr(`plant-store: ${line}\n`);
}
