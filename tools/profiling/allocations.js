// @ts-check
// Preload for an app under a benchmark: samples every allocation, the ones the garbage collector has already taken
// included (Node's own --heap-prof keeps only what is still alive at the end, which says nothing about garbage),
// and writes the profile when the process exits:
//   APP_NODE_ARGS="-r ./tools/profiling/allocations.js" npm run bench:gateway -- --rate 0
//   npm run profile:allocations -- .local/profiles/gateway-<pid>.heapprofile
// The file opens in Chrome's DevTools (Memory tab) as well. Sampling costs the app a few per cent of throughput.
const fs = require('node:fs');
const inspector = require('node:inspector');
const path = require('node:path');

const session = new inspector.Session();
session.connect();
const start = () =>
  session.post('HeapProfiler.startSampling', {
    samplingInterval: 8192, // bytes between samples, on average
    includeObjectsCollectedByMajorGC: true,
    // ALLOCATIONS_PROMOTED=1 leaves out what a scavenge took: what is left outlived the young generation, and its
    // rate is what sets how often the old generation is collected (a mark-compact: the long pauses).
    includeObjectsCollectedByMinorGC: process.env.ALLOCATIONS_PROMOTED !== '1',
  });
// ALLOCATIONS_ON_SIGNAL=1: sampling starts at the first SIGUSR2 (kill -USR2 <pid>), so that start-up's allocations
// (modules, source maps) stay out of a profile of the load.
if (process.env.ALLOCATIONS_ON_SIGNAL === '1') process.once('SIGUSR2', start);
else start();

const app = path.basename(process.argv[1] ?? 'node').replace(/\.js$/, '') === 'main' ? appName() : 'node';
process.on('exit', () => {
  // An in-process inspector session answers synchronously, so this runs to the end inside 'exit'.
  session.post('HeapProfiler.stopSampling', (err, result) => {
    if (err) return console.error(`allocation profile not written: ${err.message}`);
    const dir = path.resolve('.local/profiles');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${app}-${process.pid}.heapprofile`);
    writeProfile(file, result.profile);
    console.error(`allocation profile: ${file}`);
  });
});

/**
 * Writes the profile node by node: one JSON string of it (tens of MB after a benchmark) on top of the parsed tree
 * could pass the gateway's 128 MB old-space cap, and the profile was lost with the process.
 * @param {string} file
 * @param {{ head: { children: unknown[] } }} profile
 */
function writeProfile(file, profile) {
  const fd = fs.openSync(file, 'w');
  /** @param {{ children: unknown[] }} node */
  const writeNode = (node) => {
    const { children, ...own } = node;
    fs.writeSync(fd, `${JSON.stringify(own).slice(0, -1)},"children":[`);
    children.forEach((child, i) => {
      if (i > 0) fs.writeSync(fd, ',');
      writeNode(/** @type {{ children: unknown[] }} */ (child));
    });
    fs.writeSync(fd, ']}');
  };
  // The tree only: the list of every sample (~16 MB after a benchmark) is not needed to read where bytes went.
  fs.writeSync(fd, '{"head":');
  writeNode(profile.head);
  fs.writeSync(fd, '}');
  fs.closeSync(fd);
}

/** `gateway` or `worker`, from the built entry point's path (dist/apps/<app>/...). */
function appName() {
  return /dist\/apps\/([^/]+)\//.exec(process.argv[1] ?? '')?.[1] ?? 'node';
}
