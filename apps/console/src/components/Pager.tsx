import { Link } from '../router';

export type PagerProps = {
  /** The API's nextCursor: null on the last page, which has no link. */
  cursor: string | null;
  /** The console URL of the page that cursor starts. */
  to: (cursor: string) => string;
  /** The link's text ("Older plants"). */
  label: string;
};

/** A list's link to its next page (a paragraph of its own), when there is one. */
export function Pager({ cursor, to, label }: PagerProps) {
  if (!cursor) return null;
  return (
    <p>
      <Link to={to(cursor)}>{label}</Link>
    </p>
  );
}
