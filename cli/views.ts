// Human forms more than one command group shows: a page of a table with where the next one starts, and a request
// as it went out (a test send, a delivery).
import type { Schema } from '@app/api-client';
import { type Column, table } from './table';

/** A page and where the next one starts. */
export const pageOf = <Row extends object>(page: { items: Row[]; nextCursor: string | null }, cols: Column<Row>[]) =>
  `${table(page.items, cols)}${page.nextCursor ? `\n(more: --cursor ${page.nextCursor})` : ''}`;

/** A request as it went out: headers (the token hidden by the API), a blank line, the body. */
export const exchange = (r: Schema<'SentRequest'>) =>
  `${
    r.headers
      ? Object.entries(r.headers)
          .map(([k, v]) => `${k}: ${v}`)
          .join('\n')
      : '(not sent yet)'
  }\n\n${r.body}`;
