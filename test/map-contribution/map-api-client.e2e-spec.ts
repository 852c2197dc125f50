/**
 * The API 0.6 client against the loopback fake map server (split from the adapters suite): plain client over real
 * HTTP, no application and no database.
 */
import {
  MapApiClient,
  MapApiError,
  type MapApiClientOptions,
} from '../../src/map-contribution/adapters/map-api.client.js';
import {
  BOOKCASE,
  LAT,
  LNG,
  TOKEN,
  USER_AGENT,
  caught,
  useFakeMapServer,
} from './adapters-support.js';

const fake = useFakeMapServer();

function apiClient(options: Partial<MapApiClientOptions> = {}): MapApiClient {
  return new MapApiClient({
    baseUrl: fake.url,
    token: TOKEN,
    userAgent: USER_AGENT,
    timeoutMs: 2_000,
    ...options,
  });
}

describe('MapApiClient', () => {
  const CHANGESET_TAGS = {
    comment: 'Add reviewed public bookcase "Lindenweg" <Kreuzberg> & more',
    created_by: 'bookcase-directory/0.1.0',
    source: "individually reviewed user submission; 'survey'",
    description: 'https://wiki.example.org/Import/Bookcases',
    mechanical: 'yes',
    review_requested: 'yes',
  };
  const NODE_TAGS = { amenity: 'public_bookcase', name: 'Bücher & Co', capacity: '40' };

  it('sends the bearer token and the User-Agent on every call', async () => {
    const client = apiClient();
    await client.permissions();
    await client.capabilities();
    const changeset = await client.createChangeset(CHANGESET_TAGS);
    await client.createNode(changeset, LAT, LNG, NODE_TAGS);
    await client.closeChangeset(changeset);
    await client.downloadChangeset(changeset);

    expect(fake.requests).toHaveLength(7);
    for (const request of fake.requests) {
      expect(request.authorization).toBe('valid');
      expect(request.headers['user-agent']).toBe(USER_AGENT);
    }
  });

  it('reads the write permission from XML or JSON', async () => {
    expect(await apiClient().permissions()).toEqual({
      allowWriteApi: true,
      permissions: ['allow_read_prefs', 'allow_write_api'],
    });

    fake.permissions = ['allow_read_prefs'];
    expect((await apiClient().permissions()).allowWriteApi).toBe(false);

    fake.script('permissions', {
      kind: 'status',
      status: 200,
      headers: { 'Content-Type': 'application/json' },
      body: '{"version":"0.6","permissions":["allow_write_api"]}',
    });
    expect(await apiClient().permissions()).toEqual({
      allowWriteApi: true,
      permissions: ['allow_write_api'],
    });
  });

  it('parses the capabilities', async () => {
    fake.maxChangesetElements = 50;

    expect(await apiClient().capabilities()).toEqual({
      versionMinimum: '0.6',
      versionMaximum: '0.6',
      changesetMaximumElements: 50,
      waynodesMaximum: 2000,
      relationMembersMaximum: 32000,
      areaMaximum: 0.25,
      timeoutSeconds: 300,
      status: { database: 'online', api: 'online', gpx: 'online' },
    });
    expect(fake.requestsTo('capabilities')[0].path).toBe('/api/0.6/capabilities');
  });

  it('creates a changeset with exactly the given tags, escaped', async () => {
    const id = await apiClient().createChangeset(CHANGESET_TAGS);

    const [request] = fake.requestsTo('changeset.create');
    expect(request.method).toBe('PUT');
    expect(request.path).toBe('/api/0.6/changeset/create');
    expect(request.headers['content-type']).toBe('text/xml; charset=utf-8');
    expect(request.body).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<osm><changeset>' +
        '<tag k="comment" v="Add reviewed public bookcase &quot;Lindenweg&quot; &lt;Kreuzberg&gt; &amp; more"/>' +
        '<tag k="created_by" v="bookcase-directory/0.1.0"/>' +
        '<tag k="source" v="individually reviewed user submission; &apos;survey&apos;"/>' +
        '<tag k="description" v="https://wiki.example.org/Import/Bookcases"/>' +
        '<tag k="mechanical" v="yes"/>' +
        '<tag k="review_requested" v="yes"/>' +
        '</changeset></osm>',
    );
    expect(fake.changesets.get(id)).toMatchObject({ tags: CHANGESET_TAGS, open: true });
  });

  it('round-trips a `__proto__` key as an ordinary tag', async () => {
    const client = apiClient();
    const tags = Object.fromEntries([['__proto__', 'odd'], ...Object.entries(CHANGESET_TAGS)]);
    const changeset = await client.createChangeset(tags);

    expect(fake.requestsTo('changeset.create')[0].body).toContain('<tag k="__proto__" v="odd"/>');
    expect(Object.entries((await client.showChangeset(changeset)).tags)).toEqual(
      Object.entries(tags),
    );
  });

  it('creates a node with exactly the position and tags, by POST /api/0.6/nodes', async () => {
    const client = apiClient();
    const changeset = await client.createChangeset(CHANGESET_TAGS);

    const id = await client.createNode(changeset, 52.5200001234, -0.00000001, NODE_TAGS);

    const [request] = fake.requestsTo('node.create');
    expect(`${request.method} ${request.path}`).toBe('POST /api/0.6/nodes');
    expect(request.body).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<osm>' +
        `<node changeset="${changeset}" lat="52.5200001" lon="0.0000000">` +
        '<tag k="amenity" v="public_bookcase"/><tag k="name" v="Bücher &amp; Co"/>' +
        '<tag k="capacity" v="40"/></node></osm>',
    );
    expect(fake.nodes.get(id)).toEqual({
      id,
      changesetId: changeset,
      lat: 52.5200001,
      lon: 0,
      tags: NODE_TAGS,
    });
  });

  it('can create the node the API 0.6 way, by PUT /api/0.6/node/create', async () => {
    const client = apiClient({ nodeCreateCall: 'PUT /api/0.6/node/create' });
    const changeset = await client.createChangeset(CHANGESET_TAGS);

    const id = await client.createNode(changeset, LAT, LNG, NODE_TAGS);

    const [request] = fake.requestsTo('node.create');
    expect(`${request.method} ${request.path}`).toBe('PUT /api/0.6/node/create');
    expect(fake.nodes.get(id)?.tags).toEqual(NODE_TAGS);
  });

  it('downloads what a changeset created, and whether it is open', async () => {
    const client = apiClient();
    const changeset = await client.createChangeset(CHANGESET_TAGS);
    const node = await client.createNode(changeset, LAT, LNG, NODE_TAGS);

    expect(await client.downloadChangeset(changeset)).toEqual({
      id: changeset,
      open: true,
      tags: CHANGESET_TAGS,
      created: [{ type: 'node', id: node, lat: LAT, lon: LNG, tags: NODE_TAGS }],
      otherChanges: [],
    });

    await client.closeChangeset(changeset);
    expect(fake.changesets.get(changeset)?.open).toBe(false);
    expect(await client.downloadChangeset(changeset)).toMatchObject({ open: false });
  });

  it('downloads an empty changeset as having created nothing', async () => {
    const client = apiClient();
    const changeset = await client.createChangeset(CHANGESET_TAGS);

    expect(await client.downloadChangeset(changeset)).toMatchObject({ open: true, created: [] });
  });

  it('never retries a write that timed out: ambiguous, one request', async () => {
    const client = apiClient({ timeoutMs: 200 });
    const changeset = await client.createChangeset(CHANGESET_TAGS);
    fake.script('node.create', { kind: 'hang' });

    const error = await caught<MapApiError>(client.createNode(changeset, LAT, LNG, NODE_TAGS));

    expect(error).toBeInstanceOf(MapApiError);
    expect(error).toMatchObject({ code: 'ambiguous', operation: 'node_create', status: null });
    expect(error.message).toBe(
      'map API node_create failed (ambiguous): outcome unknown, reconcile before any retry',
    );
    expect(fake.requestsTo('node.create')).toHaveLength(1);
  });

  it('never retries a write whose connection closed: ambiguous, one request', async () => {
    const client = apiClient();
    fake.script('changeset.create', { kind: 'close' });

    const error = await caught<MapApiError>(client.createChangeset(CHANGESET_TAGS));

    expect(error.code).toBe('ambiguous');
    expect(fake.requestsTo('changeset.create')).toHaveLength(1);
    expect(fake.changesets.size).toBe(0);
  });

  it('treats a 5xx to a write as ambiguous (the write may have happened), without retrying', async () => {
    const client = apiClient();
    const changeset = await client.createChangeset(CHANGESET_TAGS);
    fake.script('node.create', { kind: 'write_then_status', status: 502 });

    const error = await caught<MapApiError>(client.createNode(changeset, LAT, LNG, NODE_TAGS));

    expect(error).toMatchObject({ code: 'ambiguous', status: 502 });
    expect(fake.requestsTo('node.create')).toHaveLength(1);
    expect(fake.nodes.size).toBe(1);
  });

  it('reports a lost answer after the write as ambiguous, and reconciliation finds the node', async () => {
    const client = apiClient();
    const changeset = await client.createChangeset(CHANGESET_TAGS);
    fake.script('node.create', { kind: 'write_then_drop' });

    const error = await caught<MapApiError>(client.createNode(changeset, LAT, LNG, NODE_TAGS));

    expect(error.code).toBe('ambiguous');
    expect(fake.requestsTo('node.create')).toHaveLength(1);
    const [node] = [...fake.nodes.values()];
    expect(node).toMatchObject({ changesetId: changeset, tags: NODE_TAGS });
    const contents = await client.downloadChangeset(changeset);
    expect(contents.created).toEqual([
      { type: 'node', id: node.id, lat: LAT, lon: LNG, tags: NODE_TAGS },
    ]);
    expect(contents.open).toBe(true);
  });

  it('reports a 2xx with an unreadable body to a write as ambiguous', async () => {
    fake.script('changeset.create', { kind: 'malformed', body: 'created!' });

    const error = await caught<MapApiError>(apiClient().createChangeset(CHANGESET_TAGS));

    expect(error).toMatchObject({ code: 'ambiguous', status: 200 });
  });

  it('answers 401 as unauthorized, for reads and writes, and never shows the token', async () => {
    const client = apiClient({ token: 'revoked-token-9f' });

    const read = await caught<MapApiError>(client.permissions());
    const write = await caught<MapApiError>(client.createChangeset(CHANGESET_TAGS));

    expect(read).toMatchObject({ code: 'unauthorized', status: 401 });
    expect(write).toMatchObject({ code: 'unauthorized', status: 401 });
    expect(fake.requests.map((request) => request.authorization)).toEqual(['invalid', 'invalid']);
    expect(fake.changesets.size).toBe(0);
    for (const error of [read, write]) {
      expect(`${error.message} ${JSON.stringify(error)} ${error.stack}`).not.toContain('revoked');
    }
  });

  it('answers 403 as forbidden and other definite refusals as rejected', async () => {
    const client = apiClient();
    fake.script('changeset.create', { kind: 'status', status: 403, body: 'blocked' });
    expect(await caught(client.createChangeset(CHANGESET_TAGS))).toMatchObject({
      code: 'forbidden',
      status: 403,
    });

    const changeset = await client.createChangeset(CHANGESET_TAGS);
    await client.closeChangeset(changeset);
    expect(await caught(client.createNode(changeset, LAT, LNG, NODE_TAGS))).toMatchObject({
      code: 'rejected',
      status: 409,
    });
    expect(await caught(client.closeChangeset(changeset))).toMatchObject({
      code: 'rejected',
      status: 409,
      operation: 'changeset_close',
    });
    expect(await caught(client.downloadChangeset(99))).toMatchObject({
      code: 'rejected',
      status: 404,
    });
    fake.script('changeset.create', { kind: 'rate_limited', retryAfter: '60' });
    expect(await caught(client.createChangeset(CHANGESET_TAGS))).toMatchObject({
      code: 'rejected',
      status: 429,
    });
    expect(fake.nodes.size).toBe(0);
  });

  it('reports read failures as server_error, timeout or malformed_response', async () => {
    const client = apiClient({ timeoutMs: 150 });
    fake.script('capabilities', { kind: 'status', status: 503, body: 'SECRET-BODY' });
    const server = await caught<MapApiError>(client.capabilities());
    expect(server).toMatchObject({ code: 'server_error', status: 503 });
    expect(server.message).not.toContain('SECRET');

    fake.script('permissions', { kind: 'hang' });
    expect(await caught(client.permissions())).toMatchObject({ code: 'timeout' });

    fake.script('capabilities', { kind: 'malformed', body: '<osm><api></osm>' });
    expect(await caught(client.capabilities())).toMatchObject({ code: 'malformed_response' });

    fake.script('capabilities', { kind: 'malformed', body: '<osm><api/></osm>' });
    expect(await caught(client.capabilities())).toMatchObject({ code: 'malformed_response' });

    fake.script('changeset.show', { kind: 'malformed', body: '<osm><changeset id="5"/></osm>' });
    expect(await caught(client.downloadChangeset(5))).toMatchObject({
      code: 'malformed_response',
      operation: 'changeset_show',
    });
    expect(fake.requests).toHaveLength(5);
  });

  it('performs a held write only once released (for tests that need overlapping calls)', async () => {
    const client = apiClient();
    const changeset = await client.createChangeset(CHANGESET_TAGS);
    fake.script('node.create', { kind: 'hold' });

    const pending = client.createNode(changeset, LAT, LNG, NODE_TAGS);
    await fake.waitForRequests(1, 'node.create');
    expect(fake.nodes.size).toBe(0);
    fake.release();

    expect(fake.nodes.get(await pending)).toMatchObject({ changesetId: changeset });
  });

  it('refuses unsendable values before any request', async () => {
    const client = apiClient();
    await expect(client.createChangeset({ comment: 'bell \u0007' })).rejects.toThrow(RangeError);
    await expect(client.createChangeset({ comment: 'x'.repeat(256) })).rejects.toThrow(RangeError);
    await expect(client.createChangeset({ '': 'empty key' })).rejects.toThrow(RangeError);
    await expect(client.createNode(1, 95, 0, BOOKCASE)).rejects.toThrow(RangeError);
    await expect(client.createNode(0, 1, 0, BOOKCASE)).rejects.toThrow(RangeError);
    expect(fake.requests).toHaveLength(0);
  });

  it('accepts the base URL with a trailing /api/0.6', async () => {
    await apiClient({ baseUrl: `${fake.url}/api/0.6/` }).capabilities();

    expect(fake.requestsTo('capabilities')[0].path).toBe('/api/0.6/capabilities');
  });
});
