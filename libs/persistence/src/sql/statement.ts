/**
 * A statement as a repository sends it: its text exactly, and what each parameter means (`params[0]` is `$1`).
 * Every statement is declared with statement() and listed in STATEMENTS (./statements.ts), from which
 * `npm run generate:sql` renders libs/persistence/sql/<area>.sql: the SQL readable whole, beside the code.
 */
export interface Statement {
  /** Unique; where a statement is sent named (parsed once per connection), this is its prepared name. */
  readonly name: string;
  /** The repository method (or function) that sends it. */
  readonly runBy: string;
  /** One line per parameter, in order: `$1` first. */
  readonly params: readonly string[];
  readonly text: string;
}

export const statement = (s: Statement): Statement => s;
