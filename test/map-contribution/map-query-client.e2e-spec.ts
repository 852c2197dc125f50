/**
 * The Overpass-style query client against the loopback fake map server (split from the adapters suite): plain
 * client over real HTTP. Waiting is injected (`sleep`), and the only real time spent is in the short per-attempt
 * timeouts of the timeout tests.
 */
import {
  MapQueryClient,
  MapQueryError,
  type MapQueryClientOptions,
} from '../../src/map-contribution/adapters/map-query.client.js';
import {
  BOOKCASE,
  DEG_PER_M,
  LAT,
  LNG,
  USER_AGENT,
  caught,
  useFakeMapServer,
} from './adapters-support.js';

const fake = useFakeMapServer();
let sleeps: number[];

beforeEach(() => {
  sleeps = [];
});

function queryClient(options: Partial<MapQueryClientOptions> = {}): MapQueryClient {
  return new MapQueryClient({
    url: fake.queryUrl,
    userAgent: USER_AGENT,
    timeoutMs: 2_000,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...options,
  });
}

describe('MapQueryClient', () => {
  it('asks for bookcases, libraries, give boxes, book shops and brand/operator carriers, without the token', async () => {
    await queryClient().findNear(LAT, LNG, 100);

    const [request] = fake.requestsTo('query');
    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
    expect(request.headers['user-agent']).toBe(USER_AGENT);
    expect(request.authorization).toBe('absent');
    const query = new URLSearchParams(request.body).get('data');
    const around = '(around:100,52.5200000,13.4050000)';
    expect(query).toBe(
      [
        '[out:json][timeout:2];',
        '(',
        `  nwr${around}["amenity"="public_bookcase"];`,
        `  nwr${around}["amenity"="library"];`,
        `  nwr${around}["amenity"="give_box"];`,
        `  nwr${around}["shop"="books"];`,
        `  nwr${around}["brand"];`,
        `  nwr${around}["operator"];`,
        ');',
        'out center tags;',
      ].join('\n'),
    );
  });

  it('returns nodes, ways and relations nearest first, measured to the node or the center', async () => {
    fake.seedQuery(
      { type: 'way', id: 20, lat: LAT + 60 * DEG_PER_M, lon: LNG, tags: { shop: 'books' } },
      { type: 'node', id: 10, lat: LAT + 30 * DEG_PER_M, lon: LNG, tags: { ...BOOKCASE } },
      {
        type: 'relation',
        id: 30,
        lat: LAT - 80 * DEG_PER_M,
        lon: LNG,
        tags: { operator: 'Stadt' },
      },
      { type: 'node', id: 11, lat: LAT, lon: LNG, tags: { amenity: 'give_box', name: 'Box' } },
      { type: 'node', id: 12, lat: LAT + 150 * DEG_PER_M, lon: LNG, tags: { ...BOOKCASE } },
      { type: 'node', id: 13, lat: LAT + 5 * DEG_PER_M, lon: LNG, tags: { amenity: 'bench' } },
    );

    const candidates = await queryClient().findNear(LAT, LNG, 100);

    expect(candidates.map(({ type, id }) => `${type}/${id}`)).toEqual([
      'node/11',
      'node/10',
      'way/20',
      'relation/30',
    ]);
    const distances = candidates.map((candidate) => candidate.distanceMeters);
    [0, 30, 60, 80].forEach((metres, index) => expect(distances[index]).toBeCloseTo(metres, 3));
    expect(candidates[2]).toEqual({
      type: 'way',
      id: 20,
      lat: LAT + 60 * DEG_PER_M,
      lon: LNG,
      tags: { shop: 'books' },
      distanceMeters: distances[2],
    });
    expect(candidates[0].tags).toEqual({ amenity: 'give_box', name: 'Box' });
  });

  it('measures east-west distances on the sphere and reads elements without tags as untagged', async () => {
    const east = (40 * DEG_PER_M) / Math.cos((LAT * Math.PI) / 180);
    fake.script('query', {
      kind: 'status',
      status: 200,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        version: 0.6,
        elements: [
          { type: 'way', id: 7, center: { lat: LAT, lon: LNG + east } },
          { type: 'node', id: 8, lat: LAT, lon: LNG, tags: { brand: 'Bücherschrank' } },
          { type: 'node', id: 8, lat: LAT, lon: LNG, tags: { brand: 'Bücherschrank' } },
        ],
      }),
    });

    const candidates = await queryClient().findNear(LAT, LNG, 100);

    expect(candidates.map(({ type, id, tags }) => ({ type, id, tags }))).toEqual([
      { type: 'node', id: 8, tags: { brand: 'Bücherschrank' } },
      { type: 'way', id: 7, tags: {} },
    ]);
    expect(candidates[1].distanceMeters).toBeCloseTo(40, 1);
  });

  it('keeps a `__proto__` tag an ordinary tag', async () => {
    fake.script('query', {
      kind: 'malformed',
      body: '{"elements":[{"type":"node","id":1,"lat":1,"lon":2,"tags":{"__proto__":"x","name":"n"}}]}',
    });

    const [candidate] = await queryClient().findNear(1, 2, 100);

    expect(Object.entries(candidate.tags)).toEqual([
      ['__proto__', 'x'],
      ['name', 'n'],
    ]);
  });

  it('makes at most three attempts with a bounded exponential backoff', async () => {
    fake.script('query', { kind: 'status', status: 503, body: 'overloaded' }, Infinity);

    const error = await caught<MapQueryError>(queryClient().findNear(LAT, LNG, 100));

    expect(error).toBeInstanceOf(MapQueryError);
    expect(error.code).toBe('http_503');
    expect(error.attempts).toBe(3);
    expect(fake.requestsTo('query')).toHaveLength(3);
    expect(sleeps).toEqual([500, 1000]);
  });

  it('caps the backoff and never exceeds three attempts, whatever it is configured with', async () => {
    fake.script('query', { kind: 'status', status: 504 }, Infinity);

    const error = await caught<MapQueryError>(
      queryClient({ maxAttempts: 10, backoffBaseMs: 800, backoffMaxMs: 1000 }).findNear(
        LAT,
        LNG,
        100,
      ),
    );

    expect(error.code).toBe('http_504');
    expect(fake.requestsTo('query')).toHaveLength(3);
    expect(sleeps).toEqual([800, 1000]);
  });

  it('succeeds on a later attempt after a transient failure', async () => {
    fake.seedQuery({ type: 'node', id: 1, lat: LAT, lon: LNG, tags: BOOKCASE });
    fake.script('query', { kind: 'status', status: 502 });
    fake.script('query', { kind: 'close' });

    const candidates = await queryClient().findNear(LAT, LNG, 100);

    expect(candidates.map((candidate) => candidate.id)).toEqual([1]);
    expect(fake.requestsTo('query')).toHaveLength(3);
    expect(sleeps).toEqual([500, 1000]);
  });

  it('honours Retry-After on 429, in seconds or as an HTTP date', async () => {
    const now = Date.parse('2026-05-01T12:00:00Z');
    fake.script('query', { kind: 'rate_limited', retryAfter: '7' });
    fake.script('query', {
      kind: 'rate_limited',
      retryAfter: new Date(now + 12_000).toUTCString(),
    });

    await queryClient({ now: () => now }).findNear(LAT, LNG, 100);

    expect(sleeps).toEqual([7_000, 12_000]);
    expect(fake.requestsTo('query')).toHaveLength(3);
  });

  it('fails as rate_limited at once when Retry-After is beyond the ceiling', async () => {
    fake.script('query', { kind: 'rate_limited', retryAfter: '120' });

    const error = await caught<MapQueryError>(queryClient().findNear(LAT, LNG, 100));

    expect(error.code).toBe('rate_limited');
    expect(error.attempts).toBe(1);
    expect(sleeps).toEqual([]);
    expect(fake.requestsTo('query')).toHaveLength(1);
  });

  it('fails as rate_limited when every attempt is refused', async () => {
    fake.script('query', { kind: 'rate_limited', retryAfter: '1' }, Infinity);

    const error = await caught<MapQueryError>(queryClient().findNear(LAT, LNG, 100));

    expect(error.code).toBe('rate_limited');
    expect(sleeps).toEqual([1000, 1000]);
    expect(fake.requestsTo('query')).toHaveLength(3);
  });

  it('bounds every attempt with its timeout', async () => {
    fake.script('query', { kind: 'hang' }, Infinity);
    const started = Date.now();

    const error = await caught<MapQueryError>(
      queryClient({ timeoutMs: 150 }).findNear(LAT, LNG, 100),
    );

    expect(error.code).toBe('timeout');
    expect(fake.requestsTo('query')).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('times out an answer that comes too late', async () => {
    fake.script('query', { kind: 'delay', ms: 1_000 }, Infinity);

    const error = await caught<MapQueryError>(
      queryClient({ timeoutMs: 100, maxAttempts: 1 }).findNear(LAT, LNG, 100),
    );

    expect(error.code).toBe('timeout');
    expect(fake.requestsTo('query')).toHaveLength(1);
  });

  it('reports a dropped connection as network_error after three attempts', async () => {
    fake.script('query', { kind: 'close' }, Infinity);

    const error = await caught<MapQueryError>(queryClient().findNear(LAT, LNG, 100));

    expect(error.code).toBe('network_error');
    expect(fake.requestsTo('query')).toHaveLength(3);
  });

  it.each([
    ['not JSON', '{"elements": ['],
    ['an HTML page', '<html><body>error</body></html>'],
    ['no elements array', '{"version":0.6}'],
    ['a way without center', '{"elements":[{"type":"way","id":1,"tags":{}}]}'],
    ['a string id', '{"elements":[{"type":"node","id":"1","lat":1,"lon":2}]}'],
    ['an unknown type', '{"elements":[{"type":"area","id":1,"lat":1,"lon":2}]}'],
    ['a latitude out of range', '{"elements":[{"type":"node","id":1,"lat":91,"lon":2}]}'],
    ['a numeric tag', '{"elements":[{"type":"node","id":1,"lat":1,"lon":2,"tags":{"a":1}}]}'],
  ])('refuses an answer with %s as malformed_response, without retrying', async (_, body) => {
    fake.script('query', { kind: 'malformed', body });

    const error = await caught<MapQueryError>(queryClient().findNear(LAT, LNG, 100));

    expect(error.code).toBe('malformed_response');
    expect(fake.requestsTo('query')).toHaveLength(1);
  });

  it('refuses an answer over the size limit as malformed_response', async () => {
    fake.seedQuery({
      type: 'node',
      id: 1,
      lat: LAT,
      lon: LNG,
      tags: { ...BOOKCASE, name: 'x'.repeat(500) },
    });

    const error = await caught<MapQueryError>(
      queryClient({ maxResponseBytes: 300 }).findNear(LAT, LNG, 100),
    );

    expect(error.code).toBe('malformed_response');
  });

  it('treats an interpreter runtime error as incomplete and retries it', async () => {
    const partial = JSON.stringify({
      elements: [],
      remark: 'runtime error: Query timed out in "query" at line 3 after 2 seconds.',
    });
    fake.script('query', { kind: 'malformed', body: partial }, Infinity);

    const error = await caught<MapQueryError>(queryClient().findNear(LAT, LNG, 100));

    expect(error.code).toBe('incomplete_response');
    expect(fake.requestsTo('query')).toHaveLength(3);
  });

  it('does not retry a definite client error and keeps bodies out of the message', async () => {
    fake.script('query', { kind: 'status', status: 400, body: 'parse error near SECRET-BODY' });

    const error = await caught<MapQueryError>(queryClient().findNear(LAT, LNG, 100));

    expect(error.code).toBe('http_400');
    expect(error.message).toBe('map query failed (http_400) after 1 attempt');
    expect(fake.requestsTo('query')).toHaveLength(1);
  });

  it('refuses impossible arguments without a request', async () => {
    await expect(queryClient().findNear(91, 0, 100)).rejects.toThrow(RangeError);
    await expect(queryClient().findNear(0, 0, 0)).rejects.toThrow(RangeError);
    expect(fake.requests).toHaveLength(0);
  });
});
