import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback stand-in for the map database: the API 0.6 calls of the contribution workflow plus an Overpass-style
 * interpreter, with in-memory state, a request log and scripted failures. No test reaches a real map service.
 */

export type FakeMapEndpoint =
  | 'permissions'
  | 'capabilities'
  | 'changeset.create'
  | 'changeset.show'
  | 'changeset.close'
  | 'changeset.download'
  | 'node.create'
  | 'query';

/**
 * What the fake does with the next request(s) to an endpoint instead of simply serving it:
 * - `status`: answers this status and body without acting;
 * - `rate_limited`: 429 with this Retry-After, without acting;
 * - `hang`: never answers (until `stop`), without acting;
 * - `close`: destroys the socket without acting or answering;
 * - `malformed`: 200 with this body, without acting;
 * - `write_then_drop`: acts (creates, closes…), then destroys the socket: the client never hears of it;
 * - `write_then_status`: acts, then answers this status (a 502 after the node exists, say);
 * - `delay`: waits `ms`, then serves normally (or as `then`);
 * - `hold`: waits for `release()`, then serves normally (or as `then`).
 */
export type FakeMapBehaviour =
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  | { kind: 'rate_limited'; retryAfter: string }
  | { kind: 'hang' }
  | { kind: 'close' }
  | { kind: 'malformed'; body: string }
  | { kind: 'write_then_drop' }
  | { kind: 'write_then_status'; status: number }
  | { kind: 'delay'; ms: number; then?: FakeMapBehaviour }
  | { kind: 'hold'; then?: FakeMapBehaviour };

export interface FakeMapRequest {
  /** null: no such route (answered 404). */
  endpoint: FakeMapEndpoint | null;
  method: string;
  /** Path and query string. */
  path: string;
  /** All headers except `authorization`, whose value is never kept. */
  headers: IncomingHttpHeaders;
  authorization: 'absent' | 'valid' | 'invalid';
  body: string;
}

export interface FakeChangeset {
  id: number;
  tags: Record<string, string>;
  open: boolean;
  createdAt: string;
  closedAt: string | null;
  /** Nodes created in it, in order. */
  nodeIds: number[];
}

export interface FakeNode {
  id: number;
  changesetId: number;
  lat: number;
  lon: number;
  tags: Record<string, string>;
}

/** A feature the interpreter knows; ways and relations are answered with this point as their `center`. */
export interface FakeQueryElement {
  type: 'node' | 'way' | 'relation';
  id: number;
  lat: number;
  lon: number;
  tags: Record<string, string>;
}

export interface FakeMapServerOptions {
  /** The bearer token the API accepts. */
  token?: string;
}

interface Answer {
  status: number;
  body: string;
  contentType?: string;
  headers?: Record<string, string>;
}

const XML = 'application/xml; charset=utf-8';

export class FakeMapServer {
  /** The accepted bearer token; change it to simulate a rotation or a revocation. */
  token: string;
  /** What GET /api/0.6/permissions lists for a valid token. */
  permissions: string[] = ['allow_read_prefs', 'allow_write_api'];
  /** `<changesets maximum_elements>` of the capabilities, also enforced on writes. */
  maxChangesetElements = 10_000;
  /** `<status api>` of the capabilities: `online`, `readonly` or `offline` (reset() sets it back to online). */
  apiStatus: 'online' | 'readonly' | 'offline' = 'online';
  /** Whether nodes created through the API show up in interpreter answers (as on the real map). */
  queryIncludesCreatedNodes = true;

  readonly requests: FakeMapRequest[] = [];
  readonly changesets = new Map<number, FakeChangeset>();
  readonly nodes = new Map<number, FakeNode>();
  readonly queryElements: FakeQueryElement[] = [];

  private server: Server | null = null;
  private readonly scripts = new Map<
    FakeMapEndpoint,
    { behaviour: FakeMapBehaviour; remaining: number }[]
  >();
  private readonly held: (() => void)[] = [];
  private readonly waiters: (() => void)[] = [];
  private nextChangesetId = 1001;
  private nextNodeId = 500_001;

  constructor(options: FakeMapServerOptions = {}) {
    this.token = options.token ?? 'fake-map-token';
  }

  async start(): Promise<{ url: string; queryUrl: string }> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => this.handle(req, Buffer.concat(chunks).toString('utf8'), res));
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { url: this.url, queryUrl: this.queryUrl };
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    this.held.splice(0);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The MAPDB_API_BASE_URL to configure (server root). */
  get url(): string {
    if (!this.server) throw new Error('fake map server not started');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The MAPDB_QUERY_URL to configure. */
  get queryUrl(): string {
    return `${this.url}/api/interpreter`;
  }

  /** Queues `behaviour` for the next `times` requests to `endpoint` (Infinity: until `clearScripts`). */
  script(endpoint: FakeMapEndpoint, behaviour: FakeMapBehaviour, times = 1): this {
    const queue = this.scripts.get(endpoint) ?? [];
    queue.push({ behaviour, remaining: times });
    this.scripts.set(endpoint, queue);
    return this;
  }

  clearScripts(): this {
    this.scripts.clear();
    return this;
  }

  /** Adds features the interpreter answers with (filtered by the query's `around` and tag filters). */
  seedQuery(...elements: FakeQueryElement[]): this {
    this.queryElements.push(...elements);
    return this;
  }

  clearQuery(): this {
    this.queryElements.splice(0);
    return this;
  }

  /** Forgets state, scripts, seeded features and the log; keeps the token, permissions and limits. */
  reset(): void {
    this.requests.splice(0);
    this.changesets.clear();
    this.nodes.clear();
    this.queryElements.splice(0);
    this.scripts.clear();
    this.apiStatus = 'online';
    this.held.splice(0).forEach((go) => go());
  }

  /** Lets every held request proceed. */
  release(): void {
    this.held.splice(0).forEach((go) => go());
  }

  requestsTo(endpoint: FakeMapEndpoint): FakeMapRequest[] {
    return this.requests.filter((request) => request.endpoint === endpoint);
  }

  /** Requests that changed or tried to change state (everything but reads and queries). */
  get writeRequests(): FakeMapRequest[] {
    const writes: (FakeMapEndpoint | null)[] = [
      'changeset.create',
      'changeset.close',
      'node.create',
    ];
    return this.requests.filter((request) => writes.includes(request.endpoint));
  }

  /** Resolves once `count` requests (to `endpoint`, if given) have arrived. */
  async waitForRequests(count: number, endpoint?: FakeMapEndpoint, timeoutMs = 10_000) {
    const seen = () => (endpoint ? this.requestsTo(endpoint).length : this.requests.length);
    const deadline = Date.now() + timeoutMs;
    while (seen() < count) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`fake map server saw ${seen()} of ${count} requests`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private handle(req: IncomingMessage, body: string, res: ServerResponse): void {
    const method = req.method ?? '';
    const path = req.url ?? '/';
    const route = this.route(method, path.split('?')[0]);
    const { authorization: header, ...headers } = req.headers;
    const authorization =
      header === undefined ? 'absent' : header === `Bearer ${this.token}` ? 'valid' : 'invalid';
    this.requests.push({
      endpoint: route?.endpoint ?? null,
      method,
      path,
      headers,
      authorization,
      body,
    });
    this.waiters.splice(0).forEach((wake) => wake());

    if (!route) {
      this.send(res, { status: 404, body: 'Not found', contentType: 'text/plain' });
      return;
    }
    const serve = (): Answer => {
      if (route.endpoint !== 'query' && authorization === 'invalid') return unauthorized();
      const open = route.endpoint === 'query' || route.endpoint === 'capabilities';
      if (!open && authorization === 'absent') {
        return unauthorized();
      }
      return route.serve(body);
    };
    this.behave(this.nextBehaviour(route.endpoint), serve, res);
  }

  private nextBehaviour(endpoint: FakeMapEndpoint): FakeMapBehaviour | null {
    const queue = this.scripts.get(endpoint);
    const next = queue?.[0];
    if (!next) return null;
    next.remaining -= 1;
    if (next.remaining <= 0) queue.shift();
    return next.behaviour;
  }

  private behave(behaviour: FakeMapBehaviour | null, serve: () => Answer, res: ServerResponse) {
    if (!behaviour) return this.send(res, serve());
    switch (behaviour.kind) {
      case 'status':
        return this.send(res, {
          status: behaviour.status,
          body: behaviour.body ?? `scripted ${behaviour.status}`,
          contentType: 'text/plain',
          headers: behaviour.headers,
        });
      case 'rate_limited':
        return this.send(res, {
          status: 429,
          body: 'Too Many Requests',
          contentType: 'text/plain',
          headers: { 'Retry-After': behaviour.retryAfter },
        });
      case 'hang':
        return;
      case 'close':
        res.socket?.destroy();
        return;
      case 'malformed':
        return this.send(res, { status: 200, body: behaviour.body, contentType: XML });
      case 'write_then_drop':
        serve();
        res.socket?.destroy();
        return;
      case 'write_then_status':
        serve();
        return this.send(res, {
          status: behaviour.status,
          body: `scripted ${behaviour.status}`,
          contentType: 'text/plain',
        });
      case 'delay': {
        const timer = setTimeout(
          () => this.behave(behaviour.then ?? null, serve, res),
          behaviour.ms,
        );
        res.on('close', () => clearTimeout(timer));
        return;
      }
      case 'hold':
        this.held.push(() => {
          if (!res.destroyed) this.behave(behaviour.then ?? null, serve, res);
        });
        return;
    }
  }

  private send(res: ServerResponse, answer: Answer): void {
    if (res.destroyed || res.headersSent) return;
    res.writeHead(answer.status, {
      'Content-Type': answer.contentType ?? XML,
      ...answer.headers,
    });
    res.end(answer.body);
  }

  private route(
    method: string,
    path: string,
  ): { endpoint: FakeMapEndpoint; serve: (body: string) => Answer } | null {
    if (method === 'POST' && path === '/api/interpreter') {
      return { endpoint: 'query', serve: (body) => this.query(body) };
    }
    if (
      method === 'GET' &&
      (path === '/api/0.6/permissions' || path === '/api/0.6/permissions.json')
    ) {
      return { endpoint: 'permissions', serve: () => this.permissionsAnswer(path) };
    }
    if (method === 'GET' && (path === '/api/capabilities' || path === '/api/0.6/capabilities')) {
      return { endpoint: 'capabilities', serve: () => this.capabilities() };
    }
    if (method === 'PUT' && path === '/api/0.6/changeset/create') {
      return { endpoint: 'changeset.create', serve: (body) => this.createChangeset(body) };
    }
    if (
      (method === 'POST' && path === '/api/0.6/nodes') ||
      (method === 'PUT' && path === '/api/0.6/node/create')
    ) {
      return { endpoint: 'node.create', serve: (body) => this.createNode(body) };
    }
    const changeset = /^\/api\/0\.6\/changeset\/(\d+)(\/close|\/download|\/upload)?$/.exec(path);
    if (!changeset) return null;
    const id = Number(changeset[1]);
    const action = changeset[2] ?? '';
    if (method === 'GET' && action === '') {
      return { endpoint: 'changeset.show', serve: () => this.showChangeset(id) };
    }
    if (method === 'PUT' && action === '/close') {
      return { endpoint: 'changeset.close', serve: () => this.closeChangeset(id) };
    }
    if (method === 'GET' && action === '/download') {
      return { endpoint: 'changeset.download', serve: () => this.downloadChangeset(id) };
    }
    return null;
  }

  private permissionsAnswer(path: string): Answer {
    if (path.endsWith('.json')) {
      return {
        status: 200,
        body: JSON.stringify({ version: '0.6', permissions: this.permissions }),
        contentType: 'application/json; charset=utf-8',
      };
    }
    const list = this.permissions.map((name) => `<permission name="${escapeXml(name)}"/>`).join('');
    return ok(`<osm version="0.6" generator="fake"><permissions>${list}</permissions></osm>`);
  }

  private capabilities(): Answer {
    return ok(
      [
        '<osm version="0.6" generator="fake">',
        '<api>',
        '<version minimum="0.6" maximum="0.6"/>',
        '<area maximum="0.25"/>',
        '<note_area maximum="25"/>',
        '<tracepoints per_page="5000"/>',
        '<waynodes maximum="2000"/>',
        '<relationmembers maximum="32000"/>',
        `<changesets maximum_elements="${this.maxChangesetElements}" default_query_limit="100" maximum_query_limit="100"/>`,
        '<notes default_query_limit="100" maximum_query_limit="10000"/>',
        '<timeout seconds="300"/>',
        `<status database="online" api="${this.apiStatus}" gpx="online"/>`,
        '</api>',
        '<policy><imagery><blacklist regex=".*\\.example\\.com/.*"/></imagery></policy>',
        '</osm>',
      ].join('\n'),
    );
  }

  private createChangeset(body: string): Answer {
    const match =
      /^<osm(?:\s[^>]*)?>\s*<changeset(?:\s[^>]*)?>((?:\s*<tag\s[^>]*\/>)*)\s*<\/changeset>\s*<\/osm>$/.exec(
        withoutDeclaration(body),
      );
    const tags = match ? readTags(match[1]) : null;
    if (!tags) return badRequest('Cannot parse valid changeset from xml string');
    const now = new Date().toISOString();
    const id = this.nextChangesetId++;
    this.changesets.set(id, { id, tags, open: true, createdAt: now, closedAt: null, nodeIds: [] });
    return { status: 200, body: String(id), contentType: 'text/plain' };
  }

  private createNode(body: string): Answer {
    const match =
      /^<osm(?:\s[^>]*)?>\s*<node(\s[^>]*?)(?:\/>|>((?:\s*<tag\s[^>]*\/>)*)\s*<\/node>)\s*<\/osm>$/.exec(
        withoutDeclaration(body),
      );
    if (!match) return badRequest('Cannot parse valid node from xml string');
    const parsed = readNode(match[1], match[2] ?? '');
    if (typeof parsed === 'string') return badRequest(parsed);
    const refusal = this.refuseWrite(parsed.changesetId, 1);
    if (refusal) return refusal;
    const node = this.addNode(parsed);
    return { status: 200, body: String(node.id), contentType: 'text/plain' };
  }

  private closeChangeset(id: number): Answer {
    const changeset = this.changesets.get(id);
    if (!changeset) return notFound();
    if (!changeset.open) {
      return conflict(`The changeset ${id} was closed at ${changeset.closedAt}`);
    }
    changeset.open = false;
    changeset.closedAt = new Date().toISOString();
    return { status: 200, body: '', contentType: 'text/plain' };
  }

  private showChangeset(id: number): Answer {
    const changeset = this.changesets.get(id);
    if (!changeset) return notFound();
    const closed = changeset.closedAt ? ` closed_at="${changeset.closedAt}"` : '';
    return ok(
      `<osm version="0.6" generator="fake"><changeset id="${id}" created_at="${changeset.createdAt}"${closed}` +
        ` open="${changeset.open}" user="fake-import" uid="1" comments_count="0"` +
        ` changes_count="${changeset.nodeIds.length}">${tagXml(changeset.tags)}</changeset></osm>`,
    );
  }

  private downloadChangeset(id: number): Answer {
    const changeset = this.changesets.get(id);
    if (!changeset) return notFound();
    const nodes = changeset.nodeIds.map((nodeId) => {
      const node = this.nodes.get(nodeId)!;
      return (
        `<node id="${node.id}" visible="true" version="1" changeset="${id}"` +
        ` timestamp="${changeset.createdAt}" user="fake-import" uid="1"` +
        ` lat="${node.lat}" lon="${node.lon}">${tagXml(node.tags)}</node>`
      );
    });
    const create = nodes.length ? `<create>${nodes.join('')}</create>` : '';
    return ok(`<osmChange version="0.6" generator="fake">${create}</osmChange>`);
  }

  private query(body: string): Answer {
    const data = new URLSearchParams(body).get('data');
    if (!data) return { status: 400, body: 'No query found', contentType: 'text/html' };
    const created: FakeQueryElement[] = this.queryIncludesCreatedNodes
      ? [...this.nodes.values()].map(({ id, lat, lon, tags }) => ({
          type: 'node',
          id,
          lat,
          lon,
          tags,
        }))
      : [];
    const known = [...this.queryElements, ...created];
    const statements = [
      ...data.matchAll(
        /\b(nwr|node|way|relation)\(around:([\d.]+),(-?[\d.]+),(-?[\d.]+)\)((?:\[[^\]]*\])*)/g,
      ),
    ];
    const answered = statements.length
      ? known.filter((element) =>
          statements.some(([, type, radius, lat, lon, filters]) => {
            if (type !== 'nwr' && type !== element.type) return false;
            if (metres(Number(lat), Number(lon), element.lat, element.lon) > Number(radius)) {
              return false;
            }
            return [...filters.matchAll(/\["([^"]+)"(?:="([^"]*)")?\]/g)].every(
              ([, key, value]) =>
                Object.hasOwn(element.tags, key) &&
                (value === undefined || element.tags[key] === value),
            );
          }),
        )
      : known;
    const elements = answered.map(({ type, id, lat, lon, tags }) =>
      type === 'node' ? { type, id, lat, lon, tags } : { type, id, center: { lat, lon }, tags },
    );
    return {
      status: 200,
      body: JSON.stringify({
        version: 0.6,
        generator: 'fake-overpass',
        osm3s: { timestamp_osm_base: new Date().toISOString(), copyright: 'fake data' },
        elements,
      }),
      contentType: 'application/json',
    };
  }

  private refuseWrite(changesetId: number, count: number): Answer | null {
    const changeset = this.changesets.get(changesetId);
    if (!changeset) return conflict(`The changeset ${changesetId} was not found`);
    if (!changeset.open) {
      return conflict(`The changeset ${changesetId} was closed at ${changeset.closedAt}`);
    }
    if (changeset.nodeIds.length + count > this.maxChangesetElements) {
      return conflict(`The changeset ${changesetId} would exceed its element limit`);
    }
    return null;
  }

  private addNode(node: Omit<FakeNode, 'id'>): FakeNode {
    const created = {
      id: this.nextNodeId++,
      changesetId: node.changesetId,
      lat: node.lat,
      lon: node.lon,
      tags: node.tags,
    };
    this.nodes.set(created.id, created);
    this.changesets.get(node.changesetId)!.nodeIds.push(created.id);
    return created;
  }
}

function ok(xml: string): Answer {
  return { status: 200, body: `<?xml version="1.0" encoding="UTF-8"?>\n${xml}`, contentType: XML };
}

function unauthorized(): Answer {
  return { status: 401, body: "Couldn't authenticate you", contentType: 'text/plain' };
}

function badRequest(reason: string): Answer {
  return { status: 400, body: reason, contentType: 'text/plain' };
}

function conflict(reason: string): Answer {
  return { status: 409, body: reason, contentType: 'text/plain' };
}

function notFound(): Answer {
  return { status: 404, body: '', contentType: 'text/plain' };
}

function withoutDeclaration(body: string): string {
  return body.replace(/^\s*<\?xml[^>]*\?>/, '').trim();
}

function attributes(source: string): Map<string, string> {
  const attrs = new Map<string, string>();
  for (const [, key, value] of source.matchAll(/([\w:]+)="([^"]*)"/g)) {
    attrs.set(key, unescapeXml(value));
  }
  return attrs;
}

/** `<tag k v/>` elements into a record; null when one is unreadable, repeated or over 255 characters. */
function readTags(source: string): Record<string, string> | null {
  const tags = new Map<string, string>();
  for (const [, tag] of source.matchAll(/<tag(\s[^>]*)\/>/g)) {
    const attrs = attributes(tag);
    const k = attrs.get('k');
    const v = attrs.get('v');
    if (!k || v === undefined || tags.has(k)) return null;
    if ([...k].length > 255 || [...v].length > 255) return null;
    tags.set(k, v);
  }
  return Object.fromEntries(tags);
}

function readNode(attrSource: string, tagSource: string): Omit<FakeNode, 'id'> | string {
  const attrs = attributes(attrSource);
  const changesetId = Number(attrs.get('changeset'));
  const lat = Number(attrs.get('lat'));
  const lon = Number(attrs.get('lon'));
  if (!Number.isSafeInteger(changesetId) || changesetId <= 0) return 'Changeset id is missing';
  if (!attrs.get('lat') || !(Math.abs(lat) <= 90) || !attrs.get('lon') || !(Math.abs(lon) <= 180)) {
    return 'Latitude or longitude out of range';
  }
  const tags = readTags(tagSource);
  if (!tags) return 'Cannot parse tags';
  return { changesetId, lat, lon, tags };
}

function escapeXml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/\n/g, '&#10;')
    .replace(/\r/g, '&#13;')
    .replace(/\t/g, '&#9;');
}

function unescapeXml(value: string): string {
  return value.replace(/&(amp|lt|gt|quot|apos|#x[0-9a-f]+|#\d+);/gi, (_, entity: string) => {
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (entity in named) return named[entity];
    return String.fromCodePoint(
      entity[1] === 'x' || entity[1] === 'X'
        ? parseInt(entity.slice(2), 16)
        : parseInt(entity.slice(1), 10),
    );
  });
}

function tagXml(tags: Record<string, string>): string {
  return Object.entries(tags)
    .map(([k, v]) => `<tag k="${escapeXml(k)}" v="${escapeXml(v)}"/>`)
    .join('');
}

function metres(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const rad = Math.PI / 180;
  const h =
    Math.sin(((lat2 - lat1) * rad) / 2) ** 2 +
    Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lon2 - lon1) * rad) / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.min(1, Math.sqrt(h)));
}
