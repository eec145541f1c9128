// @ts-check
// Runs the end-to-end suites in a fixed order, with the ones that flood the shared plant.created topic last:
// every suite's worker reads the topic from the beginning in a group of its own, so a 20,000-record poison
// burst written early would be re-read (and re-dead-lettered) by every suite after it.
const Sequencer = require('@jest/test-sequencer').default;

const LAST = ['dead-letter-burst.e2e-spec.ts'];
const rank = (/** @type {string} */ path) => LAST.findIndex((name) => path.endsWith(name));

class PlantStoreSequencer extends Sequencer {
  /** @param {Parameters<Sequencer['sort']>[0]} tests */
  sort(tests) {
    return [...tests].sort((a, b) => rank(a.path) - rank(b.path) || a.path.localeCompare(b.path));
  }
}

module.exports = PlantStoreSequencer;
