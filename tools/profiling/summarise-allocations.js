// @ts-check
// npm run profile:allocations -- FILE.heapprofile [--top 30]: where a sampled allocation profile's bytes were
// allocated, by package or source file, then by function (see allocations.js for how to record one).
const fs = require('node:fs');

const file = process.argv[2];
if (!file) {
  console.error('usage: npm run profile:allocations -- FILE.heapprofile [--top N]');
  process.exit(2);
}
const topArg = process.argv.indexOf('--top');
const top = topArg > 0 ? Number(process.argv[topArg + 1]) : 30;
/** @type {{ head: Frame }} */
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));

/** @typedef {{ callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: Frame[] }} Frame */

/** @param {string} url */
const owner = (url) =>
  /node_modules\/(@[^/]+\/[^/]+|[^/]+)/.exec(url)?.[1] ??
  (url.startsWith('node:') ? url : url === '' ? '(native)' : url.replace(/^.*\/dist\/apps\/[^/]+\//, ''));
/** @param {Frame['callFrame']} f */
const where = (f) => `${f.functionName || '(anonymous)'} ${owner(f.url)}:${f.lineNumber + 1}`;

const byOwner = new Map();
const byFunction = new Map();
let total = 0;
/** @param {Frame} node */
const walk = (node) => {
  total += node.selfSize;
  if (node.selfSize > 0) {
    const o = owner(node.callFrame.url);
    byOwner.set(o, (byOwner.get(o) ?? 0) + node.selfSize);
    const w = where(node.callFrame);
    byFunction.set(w, (byFunction.get(w) ?? 0) + node.selfSize);
  }
  node.children.forEach(walk);
};
walk(profile.head);

/** @param {Map<string, number>} m */
const print = (m) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .forEach(([k, v]) => console.log(`${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`));
console.log(`${(total / 1e6).toFixed(0)} MB allocated (sampled) in ${file}\n\nBy package or source file:`);
print(byOwner);
console.log('\nBy function:');
print(byFunction);
