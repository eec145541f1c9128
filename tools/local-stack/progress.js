// @ts-check
// Progress lines for long steps, so a newcomer sees what `npm start` / `npm test` is doing and how long it took.
const started = Date.now();
const stamp = () => `[${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s]`;

/** Lines written so far: a step whose "done" comes after other lines names itself (steps can overlap). */
let written = 0;
const write = (/** @type {string} */ line) => {
  written++;
  process.stdout.write(`${stamp()} ${line}\n`);
};

/** @param {string} message @returns {{ done(extra?: string): void }} */
function step(message) {
  const t0 = Date.now();
  write(message);
  const mark = written;
  return {
    done: (extra = '') =>
      write(
        `${written === mark ? '  ' : `${message}: `}done in ${((Date.now() - t0) / 1000).toFixed(1)}s` +
          `${extra ? ` (${extra})` : ''}`,
      ),
  };
}

const info = (/** @type {string} */ message) => write(message);

module.exports = { step, info };
