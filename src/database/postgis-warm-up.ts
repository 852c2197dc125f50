/**
 * A backend's first PostGIS statements, paid when a pooled connection opens (issue 22, brief 22x). Measured at 1M and
 * on an empty database alike (backend CPU, /proc/<pid>/schedstat), each PostgreSQL backend pays twice, once:
 *
 * - its first call of any PostGIS function loads postgis-3.so and the ~50 libraries it links (GEOS, PROJ, …): 10–15
 *   CPU-ms, mostly the kernel and the dynamic linker. Every list page calls one (ST_X/ST_Y of its columns);
 * - its first distance on `geography` (ST_DWithin, _ST_DWithin, `<->`: a circle's count and page) builds the
 *   spheroid of SRID 4326 through PROJ, which opens and queries its proj.db (SQLite: 41 % of the samples, the kernel
 *   27 %): 10–14 CPU-ms more.
 *
 * Both stay for the backend's life, so a pooled connection pays them in the first request that needs them (a
 * proximity request on a new connection: ~20 ms of backend CPU before its own work). POSTGIS_WARM_UP does both at
 * once; run when a pool opens a connection (the pool's `connect` event: warmPostgis), the request that opened it
 * still waits for it, so it pays only where connections open ahead of requests (a pool filled at start) — and it
 * costs every connection the ~25 ms, also those that never serve a circle. Preloading postgis-3 in the server
 * (`shared_preload_libraries`) would remove the first part for every backend; the second has no server-side cure.
 */
export const POSTGIS_WARM_UP = `SELECT _ST_DWithin('SRID=4326;POINT(0 0)'::geography,
  'SRID=4326;POINT(0 0)'::geography, 0, true) AS warm`;

/** Anything with pg's `query(text)` (a pg Client or PoolClient). */
export interface Queryable {
  query(text: string): Promise<unknown>;
}

/** Runs POSTGIS_WARM_UP on a newly opened connection. */
export async function warmPostgis(client: Queryable): Promise<void> {
  await client.query(POSTGIS_WARM_UP);
}
