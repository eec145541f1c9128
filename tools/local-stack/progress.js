// @ts-check
// Progress lines for long steps, so a newcomer sees what `npm start` / `npm test` is doing and how long it took.
const started = Date.now();
const stamp = () => `[${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s]`;

/** @param {string} message @returns {{ done(extra?: string): void }} */
function step(message) {
  const t0 = Date.now();
  process.stdout.write(`${stamp()} ${message}\n`);
  return {
    done: (extra = '') =>
      process.stdout.write(
        `${stamp()}   done in ${((Date.now() - t0) / 1000).toFixed(1)}s${extra ? ` (${extra})` : ''}\n`,
      ),
  };
}

const info = (/** @type {string} */ message) => process.stdout.write(`${stamp()} ${message}\n`);

module.exports = { step, info };
