import { setFlagsFromString } from 'node:v8';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import {
  binaryArrayTypes,
  binaryNumberArray,
  numberArrayText,
  parameterText,
  PreparedRead,
  PreparedReader,
  type StatementInfo,
} from './prepared-reader.js';
import { FAST_TIMESTAMP_TYPES, ISO_TIMESTAMP_TYPES, type TypeParsers } from './timestamp-parser.js';

describe('parameterText', () => {
  it('gives parameters the text form pg sends', () => {
    expect(parameterText(null)).toBeNull();
    expect(parameterText(undefined)).toBeNull();
    expect(parameterText(20)).toBe('20');
    expect(parameterText(true)).toBe('true');
    expect(parameterText('DE')).toBe('DE');
    expect(parameterText(new Date('2026-11-24T21:00:00Z'))).toBe('2026-11-24T21:00:00.000Z');
    expect(parameterText([3, 1, 2])).toBe('{"3","1","2"}');
    expect(parameterText(['a"b', 'c\\d', null])).toBe('{"a\\"b","c\\\\d",NULL}');
    expect(parameterText({ a: 1 })).toBe('{"a":1}');
  });
});

describe('numberArrayText', () => {
  it('gives arrays of numbers as array literals of bare numbers, anything else as it is', () => {
    expect(numberArrayText([3, -1, 0])).toBe('{3,-1,0}');
    expect(numberArrayText([])).toBe('{}');
    expect(numberArrayText([0.1, -2.5e-9, 1e21, -0, NaN])).toBe('{0.1,-2.5e-9,1e+21,0,NaN}');
    const mixed = [1, null];
    expect(numberArrayText(mixed)).toBe(mixed);
    const texts = ['1', '2'];
    expect(numberArrayText(texts)).toBe(texts);
    expect(numberArrayText(5)).toBe(5);
    expect(numberArrayText('{1}')).toBe('{1}');
    expect(numberArrayText(null)).toBeNull();
  });
});

describe('binaryArrayTypes', () => {
  it('finds the parameters every use of which is a cast to int[] or float8[]', () => {
    expect(
      binaryArrayTypes(
        `SELECT $1::int[], $2::float8[], (SELECT $2::float8[]), $3::int, $4::int[], $4, $5::integer[],
         $6::int[][], $7::float8[]::text, $8::text[], $9::int[], $9::float8[], $10::int4[], $11`,
      ),
    ).toEqual([23, 701, 0, 0, 23, 0, 701, 0, 0, 23, 0]);
    expect(binaryArrayTypes('SELECT 1')).toEqual([]);
    expect(binaryArrayTypes('SELECT $2::int[]')).toEqual([0, 23]);
  });
});

describe('binaryNumberArray', () => {
  const elements = (bytes: Buffer, width: number) =>
    Array.from({ length: bytes.readInt32BE(12) }, (_, i) =>
      width === 4 ? bytes.readInt32BE(24 + i * 8) : bytes.readDoubleBE(24 + i * 12),
    );

  it("writes PostgreSQL's binary array of int4 or float8, the text form's values", () => {
    const ints = binaryNumberArray([3, -1, -0, 2147483647, -2147483648], 23)!;
    expect([ints.readInt32BE(0), ints.readInt32BE(4), ints.readUInt32BE(8)]).toEqual([1, 0, 23]);
    expect([ints.readInt32BE(12), ints.readInt32BE(16), ints.readInt32BE(20)]).toEqual([5, 1, 4]);
    expect(ints).toHaveLength(20 + 5 * 8);
    expect(elements(ints, 4)).toEqual([3, -1, 0, 2147483647, -2147483648]);
    const values = [0.1, -2.5e-9, 1e21, -0, 5e-324, NaN, Infinity, -13.404954];
    const floats = binaryNumberArray(values, 701)!;
    expect([floats.readUInt32BE(8), floats.readInt32BE(20)]).toEqual([701, 8]);
    const read = elements(floats, 8);
    // The doubles PostgreSQL reads from the text form, −0 as 0.
    expect(read.map(String)).toEqual(values.map(String));
    expect(Object.is(read[3], 0)).toBe(true);
    const empty = binaryNumberArray([], 23)!;
    expect([empty.length, empty.readInt32BE(0), empty.readUInt32BE(8)]).toEqual([12, 0, 23]);
  });

  it('leaves to the text form what PostgreSQL would not read as such an array', () => {
    expect(binaryNumberArray([1, 2.5], 23)).toBeNull();
    expect(binaryNumberArray([2147483648], 23)).toBeNull();
    expect(binaryNumberArray([1, null], 701)).toBeNull();
    expect(binaryNumberArray(['1'], 701)).toBeNull();
    expect(binaryNumberArray('{1}', 23)).toBeNull();
  });
});

describe('PreparedReader capture', () => {
  const queries: unknown[][] = [];
  const dataSource = {
    query: (text: string, params: unknown[]) => {
      queries.push([text, params]);
      return Promise.resolve([{ n: 1 }]);
    },
  } as unknown as DataSource;

  it('records nothing until started, then at most `limit` reads, and stops when taken', async () => {
    const reader = new PreparedReader(dataSource);
    await reader.read('SELECT 1', [], false);
    expect(reader.takeCapture()).toEqual([]);
    reader.startCapture(2);
    await reader.read('SELECT $1', [5], false);
    await reader.read('SELECT $1::int[]', [[1, 2]], false);
    await reader.read('SELECT 3', [], false);
    expect(reader.takeCapture()).toEqual([
      { text: 'SELECT $1', params: ['5'], prepared: false },
      { text: 'SELECT $1::int[]', params: ['{"1","2"}'], prepared: false },
    ]);
    await reader.read('SELECT 4', [], false);
    expect(reader.takeCapture()).toEqual([]);
    expect(queries).toHaveLength(5);
  });
});

describe('PreparedRead', () => {
  const field = (name: string, dataTypeID: number) =>
    ({ name, dataTypeID, format: 'text' }) as pg.FieldDef;
  const run = (
    statement: StatementInfo,
    fields: pg.FieldDef[],
    rows: (string | null)[][],
    types: TypeParsers = FAST_TIMESTAMP_TYPES,
  ) => {
    let answer: { error?: Error; rows?: unknown[] } = {};
    const read = new PreparedRead(
      's',
      'SELECT',
      [],
      statement,
      (error, result) => {
        answer = error ? { error } : { rows: result.rows };
      },
      null,
      types,
    );
    read.handleRowDescription({ fields });
    for (const row of rows) read.handleDataRow({ fields: row });
    // The rest of pg's Query, as the client calls it when the statement completes.
    const query = read as unknown as {
      handleCommandComplete(message: { text: string }, connection: null): void;
      handleReadyForQuery(connection: null): void;
    };
    query.handleCommandComplete({ text: `SELECT ${rows.length}` }, null);
    query.handleReadyForQuery(null);
    return answer;
  };

  it("parses rows as pg does, reuses a statement's shape and rebuilds it when the columns change", () => {
    const statement: StatementInfo = { digest: 'd', shape: null };
    const first = run(
      statement,
      [field('id', 23), field('at', 1184), field('ok', 16)],
      [
        ['1', '2026-11-24 21:00:00.5+00', 't'],
        ['2', null, null],
      ],
    );
    expect(first.rows).toEqual([
      { id: 1, at: new Date('2026-11-24T21:00:00.500Z'), ok: true },
      { id: 2, at: null, ok: null },
    ]);
    const shape = statement.shape;
    expect(
      run(statement, [field('id', 23), field('at', 1184), field('ok', 16)], [['3', null, 'f']])
        .rows,
    ).toEqual([{ id: 3, at: null, ok: false }]);
    expect(statement.shape).toBe(shape);
    // The same text describing other columns (another search_path, or the table altered): a new shape.
    expect(run(statement, [field('id', 25), field('n', 20)], [['3', '42']]).rows).toEqual([
      { id: '3', n: '42' },
    ]);
    expect(
      Object.keys(
        run(statement, [field('id', 25), field('n', 20)], [['4', null]]).rows![0] as object,
      ),
    ).toEqual(['id', 'n']);
  });

  it('reads timestamptz as ISO 8601 text with ISO_TIMESTAMP_TYPES, with its own shape for the statement', () => {
    const statement: StatementInfo = { digest: 'd', shape: null };
    const fields = [field('id', 23), field('at', 1184)];
    const rows = [
      ['1', '2026-11-24 21:00:00.5+00'],
      ['2', null],
      ['3', 'infinity'],
    ];
    expect(run(statement, fields, rows, ISO_TIMESTAMP_TYPES).rows).toEqual([
      { id: 1, at: '2026-11-24T21:00:00.500Z' },
      { id: 2, at: null },
      { id: 3, at: Infinity },
    ]);
    const iso = statement.shape;
    // The same text read for Dates: not the ISO shape.
    expect(run(statement, fields, rows.slice(0, 1)).rows).toEqual([
      { id: 1, at: new Date('2026-11-24T21:00:00.500Z') },
    ]);
    expect(statement.shape).not.toBe(iso);
    expect(run(statement, fields, rows.slice(0, 1), ISO_TIMESTAMP_TYPES).rows).toEqual([
      { id: 1, at: '2026-11-24T21:00:00.500Z' },
    ]);
  });

  it('builds rows of many columns as fast-mode objects (no dictionary-mode empty row to copy)', () => {
    setFlagsFromString('--allow-natives-syntax');
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- V8's own check, compiled once the flag is set
    const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (
      o: unknown,
    ) => boolean;
    const statement: StatementInfo = { digest: 'd', shape: null };
    const names = Array.from({ length: 36 }, (_, i) => `column_${i}`);
    const answer = run(
      statement,
      [...names.map((name) => field(name, 25)), field('column_3', 23)],
      [[...names.map((name) => name), '7']],
    );
    expect(hasFastProperties(statement.shape!.empty)).toBe(true);
    expect(hasFastProperties(answer.rows![0])).toBe(true);
    // A repeated name keeps its first place and the last value, as pg's rows do.
    expect(Object.keys(answer.rows![0] as object)).toEqual(names);
    expect((answer.rows![0] as Record<string, unknown>).column_3).toBe(7);
  });

  it('fails the read when a value cannot be parsed, as pg does', () => {
    const statement: StatementInfo = { digest: 'd', shape: null };
    const answer = run(statement, [field('a', 1007)], [['{1,2']]);
    expect(answer.error).toBeInstanceOf(Error);
    expect(answer.rows).toBeUndefined();
  });
});

describe('PreparedReader statement names', () => {
  /** A pool of one fake connection that answers every read with no rows and records its statement's name. */
  const readerWithNames = () => {
    const names: string[] = [];
    const client = {
      query: (query: { name: string; callback: (e: unknown, r: { rows: unknown[] }) => void }) => {
        names.push(query.name);
        query.callback(undefined, { rows: [] });
      },
      release: () => undefined,
    };
    const dataSource = {
      driver: { master: { connect: () => Promise.resolve(client) } },
    } as unknown as DataSource;
    return { reader: new PreparedReader(dataSource), names };
  };
  const built = (parts: string[]) => parts.join('');

  it('names a text by its content: equal texts share a name, texts of one length do not', async () => {
    const { reader, names } = readerWithNames();
    await reader.read(built(['SELECT ', '$1::int']), [1]);
    await reader.read(built(['SELECT ', '$1::txt']), ['a']);
    await reader.read(built(['SELECT $1', '::int']), [2]);
    await reader.read(built(['SELECT $1::in', 't2']), [3]);
    expect(names[0]).toBe(names[2]);
    expect(new Set(names).size).toBe(3);
    expect(names[0]).toMatch(/^lib_[0-9a-f]{12}_[\w-]{27}$/);
  });

  it('still names every text by its content after forgetting them (bounded at 1,000 texts)', async () => {
    const { reader, names } = readerWithNames();
    const text = (i: number) => `SELECT ${String(i).padStart(5, '0')}`;
    for (let i = 0; i < 2500; i += 1) await reader.read(text(i), []);
    for (let i = 0; i < 2500; i += 1) await reader.read(text(i), []);
    expect(new Set(names.slice(0, 2500)).size).toBe(2500);
    expect(names.slice(2500)).toEqual(names.slice(0, 2500));
  });
});
