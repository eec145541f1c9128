// @ts-check
// Where the CLI takes a token from. A token on the command line is readable by every user of the machine (ps,
// /proc/<pid>/cmdline) and stays in the shell's history, so the flags that take one still work but warn; the
// environment or a file (`--…-token-file`, mode 600) keeps it out of both.
const fs = require('node:fs');
const { ApiError, EXIT } = require('./api');

/**
 * The token, from (first found) the `--<flag>` value, the `--<flag>-file` file, then the `<variable>_FILE` and
 * `<variable>` environment variables.
 * @param {{ flag: string, value?: string, file?: string, variable?: string,
 *   env?: NodeJS.ProcessEnv, warn?: (line: string) => void }} o
 * @returns {string | undefined}
 */
function readToken({ flag, value, file, variable, env = process.env, warn = stderrLine }) {
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

/** @param {string} path @param {string} source @param {(line: string) => void} warn */
function fromFile(path, source, warn) {
  let text;
  try {
    // Group or world access: anyone else on the machine can read the token (ssh refuses such keys; we warn).
    if (path !== '-' && (fs.statSync(path).mode & 0o077) !== 0)
      warn(`warning: ${path} (${source}) can be read by other users: chmod 600 ${path}`);
    text = fs.readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (err) {
    throw new ApiError(
      `cannot read the token file ${path} (${source}): ${/** @type {Error} */ (err).message}`,
      EXIT.unavailable,
    );
  }
  const token = text.trim();
  if (!token) throw new ApiError(`the token file ${path} (${source}) is empty`, EXIT.unavailable);
  return token;
}

/** @param {string} line */
function stderrLine(line) {
  process.stderr.write(`plant-store: ${line}\n`);
}

module.exports = { readToken };
