const fs = require('node:fs');
const { execSync } = require('node:child_process');
const { startStack, paced, percentiles, postPlant } = require('./harness');
const ticks = (pid) => { try { const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return Number(f[11]) + Number(f[12]); } catch { return 0; } };
const procs = () => {
  const out = execSync("ps -eo pid,args").toString().split('\n').slice(1);
  const groups = {};
  for (const l of out) { const m = /^\s*(\d+) (.*)$/.exec(l); if (!m) continue; const a = m[2];
    const k = a.includes('gateway/src/main') ? 'gateway' : a.includes('worker/src/main') ? 'worker' : a.includes('kafka.Kafka') && a.includes('bench') ? 'kafka' : a.startsWith('postgres') || a.includes('/bin/postgres') ? 'postgres' : null;
    if (k) (groups[k] ??= []).push(Number(m[1])); }
  groups.bench = [process.pid];
  return groups;
};
(async () => {
  const rate = Number(process.argv[2] || 1000);
  const stack = await startStack();
  await paced(500, 1000, (i) => postPlant(stack.url, { id: 1e12 + i, name: 'warm' }));
  const g = procs();
  const before = Object.fromEntries(Object.entries(g).map(([k, pids]) => [k, pids.reduce((s, p) => s + ticks(p), 0)]));
  const t0 = Date.now(); const ack = [];
  await paced(rate, rate * 8, async (i) => { const s = performance.now(); await postPlant(stack.url, { id: 2e12 + i, name: 'x' }); ack.push(performance.now() - s); });
  const secs = (Date.now() - t0) / 1000;
  const g2 = procs();
  const after = Object.fromEntries(Object.entries(g2).map(([k, pids]) => [k, pids.reduce((s, p) => s + ticks(p), 0)]));
  console.log('rate', rate, 'secs', secs.toFixed(1), percentiles(ack));
  for (const k of Object.keys(after)) console.log(k.padEnd(10), ((after[k] - (before[k] ?? 0)) / 100 / secs * 100).toFixed(0) + '% of a core');
  await stack.stop();
})();
