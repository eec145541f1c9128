import { ProblemException } from '@app/observability';
import { decodeCursor } from '@app/persistence';

/** `limit` from a query string: default 50, 1 to `max`, else 422 naming the parameter. */
export function parseLimit(raw: string | undefined, fallback = 50, max = 500): number {
  if (raw === undefined) return fallback;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= max)) {
    throw ProblemException.of('validation', `limit must be an integer from 1 to ${max}`, {
      errors: [{ field: 'limit', message: `must be an integer from 1 to ${max}` }],
    });
  }
  return n;
}

/** `cursor` from a query string: one this API issued, else 422. */
export function parseCursor(raw: string | undefined): number | null {
  if (raw === undefined || raw === '') return null;
  const seq = decodeCursor(raw);
  if (seq === null) {
    throw ProblemException.of('validation', 'cursor is not one this API issued', {
      errors: [{ field: 'cursor', message: 'is not valid' }],
    });
  }
  return seq;
}
