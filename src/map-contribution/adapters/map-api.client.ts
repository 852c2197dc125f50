import type { ElementType, Tags } from '../domain/types.js';
import {
  decodeUtf8,
  discardBody,
  isLatitude,
  isLongitude,
  isPositiveId,
  joinUrl,
  readBodyLimited,
  ResponseTooLargeError,
} from './outbound-http.js';
import {
  childNamed,
  childrenNamed,
  isXmlSafe,
  parseXml,
  tagsOf,
  xmlDocument,
  xmlElement,
  XmlSyntaxError,
  type XmlElement,
} from './xml.js';
import {
  MapApiError,
  WRITES,
  type ChangesetContents,
  type ChangesetInfo,
  type CreatedElement,
  type MapApiCapabilities,
  type MapApiClientOptions,
  type MapApiErrorCode,
  type MapApiOperation,
  type MapApiPermissions,
  type NewNode,
  type NodeCreateCall,
} from './map-api.types.js';

export {
  MapApiError,
  type ChangesetContents,
  type ChangesetInfo,
  type CreatedElement,
  type MapApiCapabilities,
  type MapApiClientOptions,
  type MapApiErrorCode,
  type MapApiOperation,
  type MapApiPermissions,
  type NewNode,
  type NodeCreateCall,
};

/** A coordinate exactly as this client sends it: seven decimals, the map database's stored precision. */
export function formatCoordinate(value: number): string {
  const text = value.toFixed(7);
  return /^-0\.0+$/.test(text) ? text.slice(1) : text;
}

/** The longest key or value the map API 0.6 accepts, in characters. */
const MAX_TAG_LENGTH = 255;

function assertTags(tags: Tags): void {
  for (const [key, value] of Object.entries(tags)) {
    if (typeof value !== 'string') throw new RangeError('tag values must be strings');
    for (const text of [key, value]) {
      const length = [...text].length;
      if (length === 0 || length > MAX_TAG_LENGTH || !isXmlSafe(text)) {
        throw new RangeError(`tag keys and values need 1-${MAX_TAG_LENGTH} XML-safe characters`);
      }
    }
  }
}

function assertChangesetId(id: number): void {
  if (!isPositiveId(id)) throw new RangeError('changeset id must be a positive integer');
}

function assertPosition(lat: number, lon: number): void {
  if (!isLatitude(lat) || !isLongitude(lon)) throw new RangeError('invalid coordinate');
}

function tagElements(tags: Tags): string[] {
  return Object.entries(tags).map(([k, v]) => xmlElement('tag', { k, v }));
}

function nodeElement(attrs: Record<string, string | number>, node: NewNode) {
  return xmlElement(
    'node',
    { ...attrs, lat: formatCoordinate(node.lat), lon: formatCoordinate(node.lon) },
    tagElements(node.tags),
  );
}

/** Thrown inside parsers; turned into `malformed_response` (reads) or `ambiguous` (writes). */
class UnusableAnswer extends Error {}

function positiveInteger(text: string | undefined): number {
  if (text === undefined || !/^\d{1,15}$/.test(text.trim())) throw new UnusableAnswer();
  const value = Number(text.trim());
  if (!isPositiveId(value)) throw new UnusableAnswer();
  return value;
}

function optionalNumber(element: XmlElement | null, attribute: string): number | null {
  const text = element?.attrs[attribute];
  if (text === undefined) return null;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) throw new UnusableAnswer();
  return value;
}

function coordinateAttribute(element: XmlElement, attribute: 'lat' | 'lon'): number {
  const text = element.attrs[attribute];
  const value = Number(text);
  if (text === undefined || text.trim() === '' || !Number.isFinite(value))
    throw new UnusableAnswer();
  if (attribute === 'lat' ? !isLatitude(value) : !isLongitude(value)) throw new UnusableAnswer();
  return value;
}

function rootNamed(text: string, name: string): XmlElement {
  const root = parseXml(text);
  if (root.name !== name) throw new UnusableAnswer();
  return root;
}

function elementType(name: string): ElementType {
  if (name === 'node' || name === 'way' || name === 'relation') return name;
  throw new UnusableAnswer();
}

/**
 * Client of the map database's API 0.6 (OAuth 2 bearer token, XML bodies). It never retries anything: a write
 * whose outcome is unknown fails as `ambiguous` and must be reconciled through `downloadChangeset`, and reads are
 * cheap to repeat by hand.
 *
 * Node creation: the spec's table names `POST /api/0.6/nodes`, which is the default; API 0.6 as deployed (including
 * the development server) creates a node with `PUT /api/0.6/node/create` and the same `<osm><node …/></osm>`
 * body, answering the new id as text. Select it with `nodeCreateCall` when pointing at such a server.
 */
export class MapApiClient {
  private readonly root: string;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly nodeCreateCall: NodeCreateCall;

  constructor(private readonly options: MapApiClientOptions) {
    if (!options.baseUrl) throw new Error('MapApiClient needs the API base URL');
    if (!options.token || /[\r\n]/.test(options.token)) {
      throw new Error('MapApiClient needs a well-formed access token');
    }
    if (!options.userAgent.trim()) throw new Error('MapApiClient needs a User-Agent');
    this.root = options.baseUrl.replace(/\/+$/, '').replace(/\/api(\/0\.6)?$/, '');
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxResponseBytes = options.maxResponseBytes ?? 10_000_000;
    this.nodeCreateCall = options.nodeCreateCall ?? 'POST /api/0.6/nodes';
  }

  /** GET /api/0.6/permissions (XML or JSON answer): whether the token may write. */
  async permissions(): Promise<MapApiPermissions> {
    return this.call('permissions', 'GET', '/api/0.6/permissions', null, (text) => {
      let permissions: string[];
      if (text.trimStart().startsWith('{')) {
        const json: unknown = JSON.parse(text);
        const list = (json as { permissions?: unknown } | null)?.permissions;
        if (!Array.isArray(list) || !list.every((item) => typeof item === 'string')) {
          throw new UnusableAnswer();
        }
        permissions = list;
      } else {
        const container = childNamed(rootNamed(text, 'osm'), 'permissions');
        if (!container) throw new UnusableAnswer();
        permissions = childrenNamed(container, 'permission').map((permission) => {
          const name = permission.attrs.name;
          if (!name) throw new UnusableAnswer();
          return name;
        });
      }
      return { allowWriteApi: permissions.includes('allow_write_api'), permissions };
    });
  }

  /** GET /api/0.6/capabilities: the server's element limits and status, read instead of hard-coded. */
  async capabilities(): Promise<MapApiCapabilities> {
    return this.call('capabilities', 'GET', '/api/0.6/capabilities', null, (text) => {
      const api = childNamed(rootNamed(text, 'osm'), 'api');
      if (!api) throw new UnusableAnswer();
      const version = childNamed(api, 'version');
      const status = childNamed(api, 'status');
      return {
        versionMinimum: version?.attrs.minimum ?? null,
        versionMaximum: version?.attrs.maximum ?? null,
        changesetMaximumElements: positiveInteger(
          childNamed(api, 'changesets')?.attrs.maximum_elements,
        ),
        waynodesMaximum: optionalNumber(childNamed(api, 'waynodes'), 'maximum'),
        relationMembersMaximum: optionalNumber(childNamed(api, 'relationmembers'), 'maximum'),
        areaMaximum: optionalNumber(childNamed(api, 'area'), 'maximum'),
        timeoutSeconds: optionalNumber(childNamed(api, 'timeout'), 'seconds'),
        status: {
          database: status?.attrs.database ?? null,
          api: status?.attrs.api ?? null,
          gpx: status?.attrs.gpx ?? null,
        },
      };
    });
  }

  /** PUT /api/0.6/changeset/create with exactly `tags`; the new changeset's id. Never retried. */
  async createChangeset(tags: Tags): Promise<number> {
    assertTags(tags);
    const body = xmlDocument(
      xmlElement('osm', {}, [xmlElement('changeset', {}, tagElements(tags))]),
    );
    return this.call('changeset_create', 'PUT', '/api/0.6/changeset/create', body, (text) =>
      positiveInteger(text),
    );
  }

  /** Creates one node with exactly this position and these tags in an open changeset; its id. Never retried. */
  async createNode(changesetId: number, lat: number, lon: number, tags: Tags): Promise<number> {
    assertChangesetId(changesetId);
    assertPosition(lat, lon);
    assertTags(tags);
    const body = xmlDocument(
      xmlElement('osm', {}, [nodeElement({ changeset: changesetId }, { lat, lon, tags })]),
    );
    const [method, path] =
      this.nodeCreateCall === 'POST /api/0.6/nodes'
        ? (['POST', '/api/0.6/nodes'] as const)
        : (['PUT', '/api/0.6/node/create'] as const);
    return this.call('node_create', method, path, body, (text) => positiveInteger(text));
  }

  /** PUT /api/0.6/changeset/{id}/close. A closed changeset answers 409 (`rejected`). Never retried. */
  async closeChangeset(changesetId: number): Promise<void> {
    assertChangesetId(changesetId);
    const path = `/api/0.6/changeset/${changesetId}/close`;
    await this.call('changeset_close', 'PUT', path, '', () => undefined);
  }

  /** GET /api/0.6/changeset/{id}: whether it is still open, and its tags. */
  async showChangeset(changesetId: number): Promise<ChangesetInfo> {
    assertChangesetId(changesetId);
    const path = `/api/0.6/changeset/${changesetId}`;
    return this.call('changeset_show', 'GET', path, null, (text) => {
      const changeset = childNamed(rootNamed(text, 'osm'), 'changeset');
      if (!changeset || positiveInteger(changeset.attrs.id) !== changesetId) {
        throw new UnusableAnswer();
      }
      const open = changeset.attrs.open;
      if (open !== 'true' && open !== 'false') throw new UnusableAnswer();
      return { id: changesetId, open: open === 'true', tags: tagsOf(changeset) };
    });
  }

  /**
   * GET /api/0.6/changeset/{id}/download (osmChange) plus GET /api/0.6/changeset/{id}: what the changeset created,
   * and whether it is still open. The reconciliation read after an ambiguous write.
   */
  async downloadChangeset(changesetId: number): Promise<ChangesetContents> {
    const info = await this.showChangeset(changesetId);
    const path = `/api/0.6/changeset/${changesetId}/download`;
    const changes = await this.call('changeset_download', 'GET', path, null, (text) => {
      const created: CreatedElement[] = [];
      const otherChanges: ChangesetContents['otherChanges'] = [];
      for (const block of rootNamed(text, 'osmChange').children) {
        if (block.name !== 'create' && block.name !== 'modify' && block.name !== 'delete') {
          throw new UnusableAnswer();
        }
        for (const element of block.children) {
          const type = elementType(element.name);
          const id = positiveInteger(element.attrs.id);
          if (block.name !== 'create') {
            otherChanges.push({ action: block.name, type, id });
            continue;
          }
          const isNode = type === 'node';
          created.push({
            type,
            id,
            lat: isNode ? coordinateAttribute(element, 'lat') : null,
            lon: isNode ? coordinateAttribute(element, 'lon') : null,
            tags: tagsOf(element),
          });
        }
      }
      return { created, otherChanges };
    });
    return { ...info, ...changes };
  }

  private async call<T>(
    operation: MapApiOperation,
    method: 'GET' | 'PUT' | 'POST',
    path: string,
    body: string | null,
    parse: (text: string) => T,
  ): Promise<T> {
    const write = WRITES.has(operation);
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.options.token}`,
      'User-Agent': this.options.userAgent,
      Accept: operation === 'permissions' ? 'application/json, application/xml;q=0.9' : '*/*',
    };
    if (body !== null) headers['Content-Type'] = 'text/xml; charset=utf-8';

    let response: Response;
    try {
      response = await fetch(joinUrl(this.root, path), {
        method,
        headers,
        body,
        signal: timeout,
        redirect: 'manual',
      });
    } catch {
      throw new MapApiError(
        write ? 'ambiguous' : timeout.aborted ? 'timeout' : 'network_error',
        operation,
      );
    }

    const { status } = response;
    if (status < 200 || status > 299) {
      discardBody(response);
      throw new MapApiError(statusCode(status, write), operation, status);
    }

    let text: string | null;
    try {
      text = decodeUtf8(await readBodyLimited(response, this.maxResponseBytes));
    } catch (error) {
      if (write) throw new MapApiError('ambiguous', operation, status);
      if (error instanceof ResponseTooLargeError) {
        throw new MapApiError('malformed_response', operation, status);
      }
      throw new MapApiError(timeout.aborted ? 'timeout' : 'network_error', operation, status);
    }
    try {
      if (text === null) throw new UnusableAnswer();
      return parse(text);
    } catch (error) {
      const unusable =
        error instanceof UnusableAnswer ||
        error instanceof XmlSyntaxError ||
        error instanceof SyntaxError;
      if (!unusable) throw error;
      throw new MapApiError(write ? 'ambiguous' : 'malformed_response', operation, status);
    }
  }
}

function statusCode(status: number, write: boolean): MapApiErrorCode {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status >= 500) return write ? 'ambiguous' : 'server_error';
  return 'rejected';
}
