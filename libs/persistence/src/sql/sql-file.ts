import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A statement as a `.sql` file holds it (issue #38: each statement exists once, in SQL, with named parameters).
 * In the file, each statement is preceded by its header, comment lines:
 *
 *   -- @name find-plant
 *   -- What it does, who sends it (prose, any number of lines).
 *   -- :id the plant's id
 *   SELECT * FROM plants WHERE id = :id;
 *
 * `:id` is a parameter: every one the text uses is described by a `-- :name …` line, and every one described is
 * used (the file is refused at load otherwise). What PostgreSQL receives is the text after the header up to the
 * `;` that ends it, each `:name` replaced by `$n` in order of first use; `values()` turns named arguments into that
 * order. Comment lines before `-- @name` belong to the file, not to the statement.
 *
 * Why not PgTyped (@pgtyped/cli): its generated TypeScript embeds each statement again (the copy this format
 * removes), its generator needs a running database, its runtime sends statements unnamed (the hot ones here are
 * named, parsed once per connection), and its parser is an ES module the apps (CommonJS, Node 20) cannot load at
 * start-up. The parsing here is a tokenizer of some 60 lines, tested in sql-file.spec.ts.
 */
export interface NamedStatement {
  /** Unique; where a statement is sent named (parsed once per connection), this is its prepared name. */
  readonly name: string;
  /** Its text exactly as sent, each `:name` replaced by its `$n`. */
  readonly text: string;
  /** The parameters' names, in `$n` order (`params[0]` is `$1`). */
  readonly params: readonly string[];
  /** What each parameter means, by name. */
  readonly described: Readonly<Record<string, string>>;
  /** The arguments in `$n` order; a name missing from `args`, or one it does not have, is an error. */
  values(args: Readonly<Record<string, unknown>>): unknown[];
}

/** The statements of one `.sql` file, by name. */
export interface SqlFile {
  readonly path: string;
  readonly statements: readonly NamedStatement[];
  statement(name: string): NamedStatement;
}

/** Reads and checks `file` in `dir` (a repository's own folder: the build copies `.sql` files beside the code). */
export function sqlFile(dir: string, file: string): SqlFile {
  const path = join(dir, file);
  let source: string;
  try {
    source = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`${path}: cannot read the SQL file (the build copies libs/persistence/src/**/*.sql)`, {
      cause: err,
    });
  }
  return parseSqlFile(source, path);
}

export function parseSqlFile(source: string, path: string): SqlFile {
  const statements = splitStatements(source).flatMap((chunk) => {
    const s = parseStatement(chunk, path);
    return s ? [s] : [];
  });
  const byName = new Map(statements.map((s) => [s.name, s]));
  if (byName.size !== statements.length) throw new Error(`${path}: two statements have the same @name`);
  return {
    path,
    statements,
    statement(name) {
      const s = byName.get(name);
      if (!s) throw new Error(`${path}: no statement named ${name}`);
      return s;
    },
  };
}

/** One statement's header and text, or null for a chunk with no `-- @name` (the file's closing comments). */
function parseStatement(chunk: string, path: string): NamedStatement | null {
  const lines = chunk.split('\n');
  const at = lines.findIndex((l) => /^\s*--\s*@name\s/.test(l));
  if (at < 0) {
    if (stripComments(chunk).trim() !== '') throw new Error(`${path}: a statement without -- @name: ${chunk.trim()}`);
    return null;
  }
  const name = lines[at].replace(/^\s*--\s*@name\s+/, '').trim();
  // A `;` left out would send two statements as one text, which PostgreSQL refuses only when it is sent.
  if (lines.slice(at + 1).some((l) => /^\s*--\s*@name\s/.test(l)))
    throw new Error(`${path}: ${name} runs into the next -- @name: end it with ;`);
  let end = at + 1;
  while (end < lines.length && /^\s*--/.test(lines[end])) end++;
  const described: Record<string, string> = Object.create(null);
  for (const line of lines.slice(at + 1, end)) {
    const m = /^\s*--\s*:([A-Za-z_]\w*)\s+(.*)$/.exec(line);
    if (m) described[m[1]] = m[2].trim();
  }
  const body = lines.slice(end).join('\n').replace(/\s+$/, '');
  const params: string[] = [];
  const text = replaceParams(body, (param) => {
    if (!(param in described)) throw new Error(`${path}: ${name} uses :${param} without a "-- :${param} …" line`);
    const i = params.indexOf(param);
    return `$${i >= 0 ? i + 1 : params.push(param)}`;
  });
  const unused = Object.keys(described).filter((p) => !params.includes(p));
  if (unused.length > 0) throw new Error(`${path}: ${name} describes :${unused.join(', :')} but does not use it`);
  if (text.trim() === '') throw new Error(`${path}: ${name} has no text`);
  return {
    name,
    text,
    params,
    described,
    values(args) {
      for (const key in args) if (!(key in described)) throw new Error(`${name} has no parameter :${key}`);
      // A name left out is a mistake; a value undefined is SQL NULL, as pg sends it.
      return params.map((p) => {
        if (!Object.hasOwn(args, p)) throw new Error(`${name}: no value for :${p} (give null for SQL NULL)`);
        return args[p] ?? null;
      });
    },
  };
}

/** The file cut at each `;` that ends a statement (not one inside a string, identifier or comment). */
function splitStatements(source: string): string[] {
  const chunks: string[] = [];
  let from = 0;
  scan(source, (i, ch) => {
    if (ch === ';') {
      chunks.push(source.slice(from, i));
      from = i + 1;
    }
  });
  chunks.push(source.slice(from));
  return chunks.filter((c) => c.trim() !== '');
}

/** `text` with each `:name` outside strings, quoted identifiers and comments replaced (`::type` casts are kept). */
function replaceParams(text: string, replace: (name: string) => string): string {
  let out = '';
  let from = 0;
  scan(text, (i) => {
    if (text[i + 1] === ':' || text[i - 1] === ':') return;
    const m = /^:([A-Za-z_]\w*)/.exec(text.slice(i, i + 65));
    if (!m) return;
    out += text.slice(from, i) + replace(m[1]);
    from = i + m[0].length;
  });
  return out + text.slice(from);
}

const stripComments = (text: string) => text.replace(/--.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, '');

/** `$tag$` or `$$`, opening a dollar-quoted string (not `$1`: a tag does not start with a digit). */
const DOLLAR_TAG = /^\$(?:[A-Za-z_]\w*)?\$/;

/**
 * Calls `visit` for each `;` and `:` of `sql` that is code: outside 'strings' (E'…' with backslash escapes too),
 * "identifiers", $tag$dollar quotes$tag$, -- line and nested /* block *\/ comments.
 */
function scan(sql: string, visit: (i: number, ch: string) => void): void {
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i];
    if (ch === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? sql.length : nl;
    } else if (ch === '/' && sql[i + 1] === '*') {
      let depth = 1;
      for (i += 2; i < sql.length && depth > 0; i++) {
        const pair = sql.slice(i, i + 2);
        if (pair === '/*' || pair === '*/') {
          depth += pair === '/*' ? 1 : -1;
          i++;
        }
      }
      i--;
    } else if (ch === "'" || ch === '"') {
      const escapes = ch === "'" && /[eE]/.test(sql[i - 1] ?? '') && !/\w/.test(sql[i - 2] ?? '');
      for (i++; i < sql.length; i++) {
        if (escapes && sql[i] === '\\') i++;
        else if (sql[i] === ch) {
          if (sql[i + 1] === ch) i++;
          else break;
        }
      }
    } else if (ch === '$' && !/\w/.test(sql[i - 1] ?? '') && DOLLAR_TAG.test(sql.slice(i, i + 64))) {
      const tag = DOLLAR_TAG.exec(sql.slice(i, i + 64))![0];
      const close = sql.indexOf(tag, i + tag.length);
      i = close < 0 ? sql.length : close + tag.length - 1;
    } else if (ch === ';' || ch === ':') visit(i, ch);
  }
}
