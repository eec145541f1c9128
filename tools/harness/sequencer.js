// @ts-check
// The order jest runs the suites in. The ones that flood the shared plant.created topic go last: every suite's
// worker reads the topic from the beginning in a group of its own, so a 20,000-record poison burst written early
// would be re-read (and re-dead-lettered) by every suite after it. The longest go first, so that with two at a
// time (tools/test.js) the two workers finish together rather than one waiting out the last long suite alone.
const Sequencer = require('@jest/test-sequencer').default;

// Each suite by its path under test/.
const LAST = ['kafka/dead-letter-burst.e2e-spec.ts'];
/** Longest first (seconds each took alone on 2 cores, November 2026); the rest by file name, whatever its area. */
const FIRST = [
  'faults/chaos.e2e-spec.ts', // ~200
  'kafka/kafka-security.e2e-spec.ts', // 67
  'delivery/backfill.e2e-spec.ts', // 64
  'delivery/delivery-flow-control.e2e-spec.ts', // 50
  'delivery/delivery-lease.e2e-spec.ts', // 49
  'tools/launcher.e2e-spec.ts', // 38
  'delivery/credentials.e2e-spec.ts', // 31
  'browser/console-browser.e2e-spec.ts', // 29
  'browser/portal-browser.e2e-spec.ts', // 20
  'browser/docs-browser.e2e-spec.ts', // 17
  'kafka/dead-letters.e2e-spec.ts', // 16
];
const rank = (/** @type {string[]} */ list, /** @type {string} */ path) => {
  const i = list.findIndex((name) => path.endsWith(`/${name}`));
  return i < 0 ? list.length : i;
};

class PlantStoreSequencer extends Sequencer {
  /** @param {Parameters<Sequencer['sort']>[0]} tests */
  sort(tests) {
    const last = (/** @type {string} */ path) => (LAST.some((name) => path.endsWith(`/${name}`)) ? 1 : 0);
    const name = (/** @type {string} */ path) => path.slice(path.lastIndexOf('/') + 1);
    return [...tests].sort(
      (a, b) =>
        last(a.path) - last(b.path) ||
        rank(FIRST, a.path) - rank(FIRST, b.path) ||
        name(a.path).localeCompare(name(b.path)) ||
        a.path.localeCompare(b.path),
    );
  }
}

module.exports = PlantStoreSequencer;
