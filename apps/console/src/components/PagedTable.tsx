import { ReactNode } from 'react';
import { Pager, PagerProps } from './Pager';
import { Table, TableProps } from './Table';

export type PagedTableProps<T> = TableProps<T> & {
  /** What to say, under the table, when this page has no row; nothing when not given. */
  empty?: ReactNode;
  pager: PagerProps;
};

/** One page of a list the API pages with a cursor: the table, a line when it is empty, and the next page's link. */
export function PagedTable<T>({ empty, pager, ...table }: PagedTableProps<T>) {
  return (
    <>
      <Table {...table} />
      {empty !== undefined && table.rows.length === 0 && <p>{empty}</p>}
      <Pager {...pager} />
    </>
  );
}
