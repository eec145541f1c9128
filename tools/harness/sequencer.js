// @ts-check
// The order jest runs the suites in. The ones that flood the shared plant.created topic go last: every suite's
// worker reads the topic from the beginning in a group of its own, so a 20,000-record poison burst written early
// would be re-read (and re-dead-lettered) by every suite after it. The longest go first, so that with several at a
// time (tools/test.js) the workers finish together rather than one waiting out the last long suite alone.
const Sequencer = require('@jest/test-sequencer').default;

// Each suite by its path under test/.
const LAST = ['kafka/dead-letter-burst.e2e-spec.ts'];
/** Longest first (seconds each took on 2 cores, three at a time, 2026-11-28); the rest by file name. */
const FIRST = [
  'faults/chaos.e2e-spec.ts', // ~210 alone
  'delivery/backfill.e2e-spec.ts', // 90
  'kafka/kafka-security.e2e-spec.ts', // 87
  'delivery/destinations-restart.e2e-spec.ts', // 76
  'delivery/destinations-faults.e2e-spec.ts', // 70
  'delivery/delivery-flow-control.e2e-spec.ts', // 62
  'delivery/delivery-lease.e2e-spec.ts', // 55
  'delivery/delivery.e2e-spec.ts', // 43
  'delivery/portal-links.e2e-spec.ts', // 42
  'delivery/destinations-load.e2e-spec.ts', // 42
  'delivery/credentials.e2e-spec.ts', // 37
  'kafka/pipeline.e2e-spec.ts', // 35
  'faults/database-freeze.e2e-spec.ts', // 35 alone
  'database/outbox-statements.e2e-spec.ts', // 35
  'kafka/consumer-watchdog.e2e-spec.ts', // 33
  'tools/cli.e2e-spec.ts', // 30
  'tools/launcher.e2e-spec.ts', // 30
  'browser/portal-browser.e2e-spec.ts', // 26
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
