import {
  badEncodedComponent,
  badEncodedPairs,
  inspectBody,
  jsonNestingExceeds,
  MAX_JSON_DEPTH,
} from './input-text.js';

const nested = (depth: number) =>
  Buffer.from(`{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`);
const BAD = { msg: 'Must not contain NUL bytes or invalid UTF-8.', type: 'invalid_characters' };

describe('jsonNestingExceeds', () => {
  it.each([
    [MAX_JSON_DEPTH, false],
    [MAX_JSON_DEPTH + 1, true],
    [100_000, true],
  ])('%i levels → %s', (depth, exceeds) => {
    expect(jsonNestingExceeds(nested(depth))).toBe(exceeds);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ a: '['.repeat(100), b: '\\"[[[[', c: '"{{{{' });
    expect(jsonNestingExceeds(Buffer.from(text))).toBe(false);
  });

  it('counts siblings as one level', () => {
    expect(jsonNestingExceeds(Buffer.from(`[${'[],'.repeat(1000)}[]]`))).toBe(false);
  });
});

describe('badEncodedComponent', () => {
  it.each([
    ['plain', false],
    ['caf%C3%A9', false],
    ['%E2%82%AC', false],
    ['100%', false], // a malformed escape stays literal, as querystring leaves it
    ['a%00b', true],
    ['%ff', true],
    ['%C3%28', true],
    ['%ED%A0%80', true], // a UTF-16 surrogate encoded as UTF-8
    ['\u00c3\u0028', true], // raw bytes (latin1 text) that are not UTF-8
    ['\u00c3\u00a9', false], // raw é in UTF-8
  ])('%j → %s', (component, bad) => {
    expect(badEncodedComponent(component)).toBe(bad);
  });
});

describe('badEncodedComponent, plain ASCII', () => {
  it('answers as decoding does for every character below 0x100, alone and in text', () => {
    for (let code = 0; code < 0x100; code += 1) {
      const char = String.fromCharCode(code);
      for (const component of [char, `a${char}b`, `%41${char}`]) {
        const bytes = Buffer.from(component.replace(/%41/g, 'A'), 'latin1');
        expect([component, badEncodedComponent(component)]).toEqual([
          component,
          bytes.includes(0) || !Buffer.from(bytes).equals(Buffer.from(bytes.toString('utf8'))),
        ]);
      }
    }
  });
});

describe('badEncodedPairs', () => {
  it('names each bad field once, under its location', () => {
    expect(badEncodedPairs('q=ok&city=%ff&x%00y=1&n=a+b', 'query')).toEqual([
      { loc: ['query', 'city'], ...BAD },
      { loc: ['query', 'xy'], ...BAD },
    ]);
  });
});

describe('inspectBody', () => {
  it('finds NUL bytes in values and keys, at their location', () => {
    const body = { a: 'ok', b: ['x', 'y\0'], c: { 'd\0': 1 } };
    expect(inspectBody(body, 'body', false)).toEqual({
      tooDeep: false,
      items: expect.arrayContaining([
        { loc: ['body', 'b', 1], ...BAD },
        { loc: ['body', 'c', 'd'], ...BAD },
      ]),
    });
  });

  it('U+FFFD is bad only when the raw bytes were not UTF-8', () => {
    expect(inspectBody({ a: 'x\uFFFD' }, 'body', false).items).toEqual([]);
    expect(inspectBody({ a: 'x\uFFFD' }, 'form', true).items).toEqual([
      { loc: ['form', 'a'], ...BAD },
    ]);
  });

  it('reports nesting deeper than the limit without recursion', () => {
    let deep: unknown = [];
    for (let i = 0; i < 200_000; i += 1) deep = [deep];
    expect(inspectBody(deep, 'body', false).tooDeep).toBe(true);
    let ok: unknown = 'leaf';
    for (let i = 0; i < MAX_JSON_DEPTH; i += 1) ok = [ok];
    expect(inspectBody(ok, 'body', false)).toEqual({ tooDeep: false, items: [] });
  });
});
