import { invalidField } from '@app/observability';
import { decodeCursor, encodeCursor } from './cursor';

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** `cursor` from a query string (already checked as a string by its parameter schema): one this API issued, else 422. */
export function parseCursor(raw: unknown): number | null {
  if (raw === undefined || raw === '') return null;
  const seq = decodeCursor(String(raw));
  if (seq === null)
    throw invalidField('cursor', 'is not one this API issued: pass the nextCursor of the previous page');
  return seq;
}

/** Repositories are asked for limit + 1 rows: the extra row only says whether another page exists. */
export function toPage<R extends { seq: number }, T>(rows: R[], limit: number, map: (r: R) => T): Page<T> {
  const items = rows.slice(0, limit);
  return { items: items.map(map), nextCursor: rows.length > limit ? encodeCursor(items[items.length - 1].seq) : null };
}
