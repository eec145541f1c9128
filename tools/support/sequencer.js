// @ts-check
// The order jest runs the suites in. The ones that flood the shared plant.created topic go last: every suite's
// worker reads the topic from the beginning in a group of its own, so a 20,000-record poison burst written early
// would be re-read (and re-dead-lettered) by every suite after it. The longest go first, so that with two at a
// time (tools/test.js) the two workers finish together rather than one waiting out the last long suite alone.
const Sequencer = require('@jest/test-sequencer').default;

const LAST = ['dead-letter-burst.e2e-spec.ts'];
/** Longest first (seconds each took alone on 2 cores, November 2026); the rest by path. */
const FIRST = [
  'chaos.e2e-spec.ts', // ~200
  'kafka-security.e2e-spec.ts', // 67
  'backfill.e2e-spec.ts', // 64
  'delivery-flow-control.e2e-spec.ts', // 50
  'delivery-lease.e2e-spec.ts', // 49
  'launcher.e2e-spec.ts', // 38
  'credentials.e2e-spec.ts', // 31
  'console-browser.e2e-spec.ts', // 29
  'portal-browser.e2e-spec.ts', // 20
  'docs-browser.e2e-spec.ts', // 17
  'dead-letters.e2e-spec.ts', // 16
];
const rank = (/** @type {string[]} */ list, /** @type {string} */ path) => {
  const i = list.findIndex((name) => path.endsWith(`/${name}`));
  return i < 0 ? list.length : i;
};

class PlantStoreSequencer extends Sequencer {
  /** @param {Parameters<Sequencer['sort']>[0]} tests */
  sort(tests) {
    const last = (/** @type {string} */ path) => (LAST.some((name) => path.endsWith(`/${name}`)) ? 1 : 0);
    return [...tests].sort(
      (a, b) =>
        last(a.path) - last(b.path) || rank(FIRST, a.path) - rank(FIRST, b.path) || a.path.localeCompare(b.path),
    );
  }
}

module.exports = PlantStoreSequencer;
