// Human-readable output: aligned columns, a dash for nothing, long values cut with an ellipsis. Each value is shown
// as one line (visibleLine): a line feed or a tab in a description, say, would otherwise draw a row of its own.
import { visibleLine } from '@app/contracts/visible-text';

/**
 * A field of `Row`, or a field of one of its objects (`origin.topic`): column keys are checked against the
 * generated schemas, so a field renamed in the API is a compile error here, not an empty column.
 */
export type FieldPath<Row> = {
  [K in keyof Row & string]: NonNullable<Row[K]> extends readonly unknown[]
    ? K
    : NonNullable<Row[K]> extends object
      ? K | `${K}.${keyof NonNullable<Row[K]> & string}`
      : K;
}[keyof Row & string];

/** [field, heading, max width (default 40)] */
export type Column<Row> = readonly [key: FieldPath<Row>, heading: string, max?: number];

export function table<Row extends object>(rows: readonly Row[], columns: readonly Column<Row>[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((row) => columns.map(([key, , max]) => cut(show(pick(row, key)), max ?? 40)));
  const widths = columns.map(([, heading], i) => Math.max(heading.length, ...cells.map((c) => c[i].length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(columns.map(([, h]) => h)), ...cells.map(line)].join('\n');
}

/** One record as `key: value` lines. */
export function details(record: object): string {
  const width = Math.max(...Object.keys(record).map((k) => k.length));
  return Object.entries(record)
    .map(([k, v]) => `${k.padEnd(width)}  ${show(v)}`)
    .join('\n');
}

const pick = (row: object, path: string): unknown =>
  path
    .split('.')
    .reduce<unknown>((v, k) => (v === null || v === undefined ? v : (v as Record<string, unknown>)[k]), row);

const show = (v: unknown) =>
  visibleLine(v === null || v === undefined || v === '' ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v));

const cut = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);
