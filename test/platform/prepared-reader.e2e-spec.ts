import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/data-source-options.js';
import { PreparedReader } from '../../src/database/prepared-reader.js';
import { describeWithDatabaseServer } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * PreparedReader's prepared reads (pg's Query built from the text, each statement's row shape reused) answer the
 * same rows as the same statement run unprepared through TypeORM (pg's own parsing), for every column type the
 * repositories read, nulls included, on every pooled connection, and after the statement's columns change.
 */
describeWithDatabaseServer('PreparedReader on PostgreSQL', () => {
  let testDb: TestDatabase;
  let dataSource: DataSource;
  let reader: PreparedReader;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    dataSource = await new DataSource({
      ...buildDataSourceOptions(testDb.url, 3),
      migrations: [],
    }).initialize();
    reader = new PreparedReader(dataSource);
    await dataSource.query(`CREATE TABLE reader_probe (
      id int PRIMARY KEY, big bigint, num numeric, real_value float8, ok boolean, label text, at timestamptz,
      day date, doc jsonb, tags text[], ids int[], point geography(Point, 4326))`);
    await dataSource.query(`INSERT INTO reader_probe VALUES
      (1, 9007199254740993, 12.50, 0.1, true, 'Bücherschrank "Ост" 📚 \\ tab	end', '2026-11-24 21:00:00.123456+00',
       '2026-01-02', '{"a": [1, "x"], "b": null}', '{a,"b c",NULL}', '{3,1,2}', 'SRID=4326;POINT(13.4 52.5)'),
      (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
      (3, -1, -0.001, -1e300, false, '', '0099-01-01 00:00:00+00', '1999-12-31', '[]', '{}', '{}', NULL),
      (4, 0, 0, 0, false, 'x', 'infinity', 'infinity', '"s"', '{""}', '{-1}', NULL),
      (5, 1, 1, 1, true, 'y', '2026-03-29 01:30:00+00', '2026-03-29', '{}', '{y}', '{5}', NULL)`);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await testDb?.drop();
  });

  const text = `SELECT id, big, num, real_value, ok, label, at, day, doc, tags, ids,
      ST_Y(point::geometry) AS lat, ST_X(point::geometry) AS lng, at AT TIME ZONE 'UTC' AS local_at
    FROM reader_probe WHERE id >= $1 ORDER BY id`;

  it('answers the rows TypeORM answers, on every connection, many times over', async () => {
    const expected = await dataSource.query<unknown[]>(text, [1]);
    expect(expected).toHaveLength(5);
    const reads = await Promise.all(
      Array.from({ length: 24 }, () => reader.read<Record<string, unknown>>(text, [1])),
    );
    for (const rows of reads) expect(rows).toEqual(expected);
    expect(await reader.read(text, [4])).toEqual(await dataSource.query(text, [4]));
    expect(await reader.read(text, [99])).toEqual([]);
  });

  it("sends arrays of numbers (a circle's grid runs, ids) as pg would, to the same values", async () => {
    const arrays = `SELECT $1::int[] AS ints, $2::float8[] AS floats, $3::int[] AS empty,
        (SELECT sum(x) FROM unnest($2::float8[]) x) AS total, $2::float8[]::text AS floats_text`;
    const params = [
      [3, -1, 0, 2147483647, -2147483648],
      [0.1, -2.5e-9, 1e21, 123456789.123456, -0, 5e-324, 1.7976931348623157e308, -13.404954],
      [],
    ];
    const expected = await dataSource.query<unknown[]>(arrays, params);
    expect(await reader.read(arrays, params)).toEqual(expected);
    expect(await reader.read(arrays, params, 'generic')).toEqual(expected);
  });

  it('sends number arrays cast to int[] or float8[] in binary, to the values of their text form', async () => {
    const arrays = `SELECT $1::int[] AS ints, $2::float8[] AS floats, $2::float8[]::text AS floats_text,
        $3::float8[] AS empty, array_length($2::float8[], 1) AS n, $4::int[] AS ints_text, $4 AS again,
        (SELECT count(*) FROM unnest($5::int[]) i WHERE i = ANY($1::int[])) AS common`;
    const params = [
      [7, -0, -2147483648, 2147483647],
      [NaN, Infinity, -Infinity, -0, 0.30000000000000004, 1e-300],
      [],
      [1, 2],
      Array.from({ length: 1200 }, (_, i) => i - 600),
    ];
    const expected = await dataSource.query<unknown[]>(arrays, params);
    expect(await reader.read(arrays, params, 'generic')).toEqual(expected);
    expect(await reader.read(arrays, params)).toEqual(expected);
    // Values PostgreSQL refuses as int4 keep the text form and its error.
    const refused = (error: unknown) => String((error as Error).message);
    const tooLarge = await dataSource.query('SELECT $1::int[] AS a', [[2147483648]]).catch(refused);
    expect(await reader.read('SELECT $1::int[] AS a', [[2147483648]]).catch(refused)).toBe(
      tooLarge,
    );
    const fraction = await dataSource.query('SELECT $1::int[] AS a', [[1.5]]).catch(refused);
    expect(await reader.read('SELECT $1::int[] AS a', [[1.5]]).catch(refused)).toBe(fraction);
  });

  it('follows a statement whose columns changed (a new connection describes other columns)', async () => {
    const star = 'SELECT * FROM reader_shape WHERE id = $1';
    await dataSource.query('CREATE TABLE reader_shape (id int, a text)');
    await dataSource.query(`INSERT INTO reader_shape VALUES (1, 'one')`);
    expect(await reader.read(star, [1])).toEqual([{ id: 1, a: 'one' }]);
    // Every pooled connection that prepared the old statement is replaced (PostgreSQL refuses a prepared statement
    // whose result type changed): the next ones prepare it again and describe the new columns.
    await dataSource.query('DROP TABLE reader_shape');
    await dataSource.query('CREATE TABLE reader_shape (id bigint, b boolean, a text)');
    await dataSource.query(`INSERT INTO reader_shape VALUES (1, true, 'uno')`);
    let rows: unknown[] | null = null;
    for (let attempt = 0; attempt < 10 && rows === null; attempt++)
      rows = await reader.read(star, [1]).catch(() => null);
    expect(rows).toEqual([{ id: '1', b: true, a: 'uno' }]);
    expect(await reader.read(star, [1])).toEqual(await dataSource.query(star, [1]));
  });
});
