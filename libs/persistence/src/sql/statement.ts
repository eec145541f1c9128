/**
 * A statement as a repository sends it: its text exactly, and its parameters (`params[0]` is `$1`). Listed in
 * STATEMENTS (./statements.ts). An area whose statements are in a `.sql` file (./sql-file.ts) has them once; an
 * area still declared in TypeScript with statement() is rendered by `npm run generate:sql` into
 * libs/persistence/sql/<area>.sql, until it moves to a `.sql` file of its own (issue #38).
 */
export interface Statement {
  /** Unique; where a statement is sent named (parsed once per connection), this is its prepared name. */
  readonly name: string;
  /** One entry per parameter, in order: `$1` first (its meaning, or in a `.sql` file its name). */
  readonly params: readonly string[];
  readonly text: string;
}

/** A statement still declared in TypeScript, with the method that sends it. */
export interface DeclaredStatement extends Statement {
  /** The repository method (or function) that sends it. */
  readonly runBy: string;
}

export const statement = (s: DeclaredStatement): DeclaredStatement => s;
