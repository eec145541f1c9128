/** Opaque page cursors: the last row's sequence number, base64url-encoded. */
export function encodeCursor(seq: number): string {
  return Buffer.from(`s:${seq}`).toString('base64url');
}

export function decodeCursor(cursor: string): number | null {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const m = /^s:(\d{1,16})$/.exec(text);
  return m ? Number(m[1]) : null;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Rows were fetched with limit + 1: the extra row only says whether another page exists. */
export function toPage<R extends { seq: number }, T>(rows: R[], limit: number, map: (r: R) => T): Page<T> {
  const items = rows.slice(0, limit);
  return {
    items: items.map(map),
    nextCursor: rows.length > limit ? encodeCursor(items[items.length - 1].seq) : null,
  };
}
