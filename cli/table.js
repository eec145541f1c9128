// @ts-check
// Human-readable output: aligned columns, a dash for nothing, long values cut with an ellipsis.

/**
 * @param {Record<string, unknown>[]} rows
 * @param {[string, string, number?][]} columns [key or dotted path, heading, max width]
 */
function table(rows, columns) {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((row) => columns.map(([key, , max]) => cut(show(pick(row, key)), max ?? 40)));
  const widths = columns.map(([, heading], i) => Math.max(heading.length, ...cells.map((c) => c[i].length)));
  const line = (/** @type {string[]} */ values) =>
    values
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(columns.map(([, h]) => h)), ...cells.map(line)].join('\n');
}

/** One record as `key: value` lines. @param {Record<string, unknown>} record */
function details(record) {
  const width = Math.max(...Object.keys(record).map((k) => k.length));
  return Object.entries(record)
    .map(([k, v]) => `${k.padEnd(width)}  ${typeof v === 'object' && v !== null ? JSON.stringify(v) : show(v)}`)
    .join('\n');
}

/** @param {Record<string, unknown>} row @param {string} path */
const pick = (row, path) =>
  path.split('.').reduce((/** @type {any} */ v, k) => (v === null || v === undefined ? v : v[k]), row);

/** @param {unknown} v */
const show = (v) =>
  v === null || v === undefined || v === '' ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v);

/** @param {string} s @param {number} max */
const cut = (s, max) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

module.exports = { table, details };
