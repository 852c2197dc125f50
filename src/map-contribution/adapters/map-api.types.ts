import type { ElementType, Tags } from '../domain/types.js';

/** The map API client's errors and values (`map-api.client.ts` is the client itself). */

/**
 * Why a map API call failed, as a stable category safe to store and log (the message never holds the token, a
 * body or a URL).
 * - `ambiguous`: a write whose outcome is unknown: no answer (timeout, reset, refused), a 5xx, or a 2xx whose body
 *   could not be read. The write may have happened: reconcile (download the changeset) before anything else.
 * - `unauthorized`: 401; the token is invalid or revoked, and the caller disables writes until it changes.
 * - `forbidden`: 403; the account lacks `write_api`, is blocked or must accept terms: writes stay off too.
 * - `rejected`: any other definite non-2xx answer (3xx, 4xx including 409 and 429): nothing was done.
 * - `server_error`: a 5xx to a read.
 * - `timeout` / `network_error`: a read got no answer in time / no answer at all.
 * - `malformed_response`: a read's answer is not the documented shape (or over the size limit).
 */
export type MapApiErrorCode =
  | 'ambiguous'
  | 'unauthorized'
  | 'forbidden'
  | 'rejected'
  | 'server_error'
  | 'timeout'
  | 'network_error'
  | 'malformed_response';

export type MapApiOperation =
  | 'permissions'
  | 'capabilities'
  | 'changeset_create'
  | 'node_create'
  | 'changeset_close'
  | 'changeset_show'
  | 'changeset_download';

export const WRITES: ReadonlySet<MapApiOperation> = new Set([
  'changeset_create',
  'node_create',
  'changeset_close',
]);

export class MapApiError extends Error {
  constructor(
    readonly code: MapApiErrorCode,
    readonly operation: MapApiOperation,
    /** The HTTP status when the server answered one. */
    readonly status: number | null = null,
  ) {
    super(
      `map API ${operation} failed (${code}${status === null ? '' : `, HTTP ${status}`})` +
        (code === 'ambiguous' ? ': outcome unknown, reconcile before any retry' : ''),
    );
    this.name = 'MapApiError';
  }
}

/** Which call creates a single node (see the class comment). */
export type NodeCreateCall = 'POST /api/0.6/nodes' | 'PUT /api/0.6/node/create';

export interface MapApiClientOptions {
  /** MAPDB_API_BASE_URL: the server root (`https://api.example.org`); a trailing `/api/0.6` is tolerated. */
  baseUrl: string;
  /** MAPDB_OAUTH_ACCESS_TOKEN: an OAuth 2 bearer token with the write_api scope. */
  token: string;
  /** MAPDB_USER_AGENT: application/version plus a monitored contact URL. */
  userAgent: string;
  /** Budget of one call: connect, answer and body together. Default 30 s. */
  timeoutMs?: number;
  /** Default `POST /api/0.6/nodes` (the spec's table); the 0.6 servers in service answer `PUT /api/0.6/node/create`. */
  nodeCreateCall?: NodeCreateCall;
  /** Larger answers are refused. Default 10 MB. */
  maxResponseBytes?: number;
}

export interface MapApiPermissions {
  allowWriteApi: boolean;
  permissions: string[];
}

export interface MapApiCapabilities {
  versionMinimum: string | null;
  versionMaximum: string | null;
  /** Elements one changeset may hold. */
  changesetMaximumElements: number;
  waynodesMaximum: number | null;
  relationMembersMaximum: number | null;
  areaMaximum: number | null;
  timeoutSeconds: number | null;
  status: { database: string | null; api: string | null; gpx: string | null };
}

/** A node to create: its position and tags. */
export interface NewNode {
  lat: number;
  lon: number;
  tags: Tags;
}

export interface ChangesetInfo {
  id: number;
  open: boolean;
  tags: Tags;
}

export interface CreatedElement {
  type: ElementType;
  id: number;
  /** Nodes only; null for ways and relations. */
  lat: number | null;
  lon: number | null;
  tags: Tags;
}

export interface ChangesetContents extends ChangesetInfo {
  created: CreatedElement[];
  /** Anything modified or deleted in the changeset (a changeset of this service only creates). */
  otherChanges: { action: 'modify' | 'delete'; type: ElementType; id: number }[];
}
