import { parseSqlFile } from './sql-file';

const FILE = `-- The file's own comment, before any statement.

-- @name find-plant
-- Sent by PlantRepository.findById.
-- :id the plant's id
-- :before a seq
SELECT * FROM plants WHERE id = :id AND seq < :before::bigint AND id <> :id;

-- @name quoted
-- :a the first
SELECT to_char(now(), 'HH24:MI:SS;'), ':not', "a:b;", E'it\\'s :x;', $$ :y; $$, $q$ :z $q$ -- :w;
  /* :v; /* nested :u; */ */, :a, arr[1:2];
`;

describe('a .sql file', () => {
  const file = parseSqlFile(FILE, 'test.sql');

  it('names each statement and numbers its parameters in order of first use', () => {
    const s = file.statement('find-plant');
    expect(s.params).toEqual(['id', 'before']);
    expect(s.text).toBe('SELECT * FROM plants WHERE id = $1 AND seq < $2::bigint AND id <> $1');
    expect(s.described).toEqual({ id: "the plant's id", before: 'a seq' });
    expect(s.values({ before: 7, id: 1 })).toEqual([1, 7]);
  });

  it('leaves strings, identifiers, dollar quotes, comments and casts alone', () => {
    const s = file.statement('quoted');
    expect(s.params).toEqual(['a']);
    expect(s.text).toContain("'HH24:MI:SS;'");
    expect(s.text).toContain('/* :v; /* nested :u; */ */, $1, arr[1:2]');
    expect(file.statements.map((x) => x.name)).toEqual(['find-plant', 'quoted']);
  });

  it('refuses a name left out or one it does not have; undefined is SQL NULL, as pg sends it', () => {
    const s = file.statement('find-plant');
    expect(() => s.values({ id: 1 })).toThrow('no value for :before');
    expect(() => s.values({ id: 1, before: 2, after: 3 })).toThrow('find-plant has no parameter :after');
    expect(s.values({ id: 1, before: null })).toEqual([1, null]);
    expect(s.values({ id: 1, before: undefined })).toEqual([1, null]);
  });

  it('refuses a parameter without its description, a description without its use, and a statement without a name', () => {
    expect(() => parseSqlFile('-- @name x\nSELECT :a;', 'f.sql')).toThrow('x uses :a without');
    expect(() => parseSqlFile('-- @name x\n-- :a the a\nSELECT 1;', 'f.sql')).toThrow('describes :a but');
    // Names an object has by inheritance are not descriptions, nor arguments.
    expect(() => parseSqlFile('-- @name x\nSELECT :constructor;', 'f.sql')).toThrow('x uses :constructor without');
    const s = parseSqlFile('-- @name x\n-- :a the a\nSELECT :a;', 'f.sql').statement('x');
    expect(() => s.values({ toString: 1, a: 1 })).toThrow('x has no parameter :toString');
    expect(() => s.values(Object.create({ a: 1 }))).toThrow('no value for :a');
    expect(() => parseSqlFile('SELECT 1;', 'f.sql')).toThrow('without -- @name');
    expect(() => parseSqlFile('-- @name x\nSELECT 1;\n-- @name x\nSELECT 2;', 'f.sql')).toThrow('same @name');
    expect(() => parseSqlFile('-- @name x\nSELECT 1\n-- @name y\nSELECT 2;', 'f.sql')).toThrow('x runs into the next');
    expect(() => parseSqlFile('-- @name x\nSELECT 1;', 'f.sql').statement('y')).toThrow('no statement named y');
  });
});
