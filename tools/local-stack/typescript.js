// @ts-check
// Loads the project's TypeScript from the JavaScript that has to come first (npm start, npm test, the CLI's
// `bin`), once npm ci has installed the compiler: each .ts file transpiled only (the types are checked by
// `npx tsc`, not on every run), the @app/* aliases of tsconfig.json resolved by tsconfig-paths. Transpiled files
// are kept in node_modules/.cache/plant-store-ts, keyed by their text, the compiler's version and tsconfig.json:
// loading the compiler costs half a second (several on a loaded machine), the cache a few milliseconds.
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { ROOT } = require('./paths');

const CACHE = path.join(ROOT, 'node_modules', '.cache', 'plant-store-ts');
const PROJECT = path.join(ROOT, 'tsconfig.json');

/** From now on require() loads .ts files. */
function registerTypeScript() {
  if (require.extensions['.ts']) return;
  const tsconfigPaths = require('tsconfig-paths');
  const config = tsconfigPaths.loadConfig(ROOT);
  if (config.resultType === 'failed') throw new Error(`${PROJECT}: ${config.message}`);
  tsconfigPaths.register({ baseUrl: config.absoluteBaseUrl, paths: config.paths, addMatchAll: false });

  /** What a file's output depends on besides its own text. */
  const salt = `${require('typescript/package.json').version}\n${fs.readFileSync(PROJECT, 'utf8')}`;
  /** @type {((source: string, fileName: string) => string) | undefined} */
  let transpile;
  require.extensions['.ts'] = (/** @type {NodeJS.Module} */ module, /** @type {string} */ filename) => {
    const source = fs.readFileSync(filename, 'utf8');
    const prefix = sha(filename).slice(0, 16);
    const cached = path.join(CACHE, `${prefix}-${sha(salt, source).slice(0, 32)}.js`);
    let js;
    try {
      js = fs.readFileSync(cached, 'utf8');
    } catch {
      transpile ??= compiler();
      js = transpile(source, filename);
      save(cached, prefix, js);
    }
    /** @type {{ _compile(code: string, filename: string): void }} */ (/** @type {unknown} */ (module))._compile(
      js,
      filename,
    );
  };
}

const sha = (/** @type {string[]} */ ...parts) => createHash('sha256').update(parts.join('\0')).digest('hex');

/** TypeScript's transpileModule with the compiler options of tsconfig.json (loaded only when the cache misses). */
function compiler() {
  const ts = require('typescript');
  const { config: json } = ts.readConfigFile(PROJECT, ts.sys.readFile);
  const { options } = ts.convertCompilerOptionsFromJson(json.compilerOptions, ROOT);
  return (/** @type {string} */ source, /** @type {string} */ fileName) =>
    ts.transpileModule(source, { compilerOptions: { ...options, sourceMap: false }, fileName }).outputText;
}

/** Written whole (rename) or not at all; the file's older versions go, so the cache grows only with new files. */
function save(/** @type {string} */ file, /** @type {string} */ prefix, /** @type {string} */ js) {
  try {
    fs.mkdirSync(CACHE, { recursive: true });
    for (const old of fs.readdirSync(CACHE)) if (old.startsWith(`${prefix}-`)) fs.rmSync(path.join(CACHE, old));
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, js);
    fs.renameSync(tmp, file);
  } catch {
    // A read-only checkout still runs: it transpiles every time.
  }
}

module.exports = { registerTypeScript };
