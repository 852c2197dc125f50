import type { DataSource } from 'typeorm';
import { parameterText, PreparedReader } from './prepared-reader.js';

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
