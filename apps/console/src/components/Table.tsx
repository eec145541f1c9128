import { Key, ReactNode } from 'react';

/** A column: its header (also its React key, so unique in a table) and what a row shows in it. */
export type Column<T> = { header: string; cell: (row: T) => ReactNode };

export type TableProps<T> = {
  columns: Column<T>[];
  rows: T[];
  /** Each row's React key: its id, usually. */
  rowKey: (row: T, index: number) => Key;
  caption?: string;
};

/** The console's one table: a header row of column headers (scope="col"), then a row per item. */
export function Table<T>({ columns, rows, rowKey, caption }: TableProps<T>) {
  return (
    <table>
      {caption && <caption>{caption}</caption>}
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c.header} scope="col">
              {c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row, i) => (
          <tr key={rowKey(row, i)}>
            {columns.map((c) => (
              <td key={c.header}>{c.cell(row)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
