/**
 * The workflow's timing rules (decisions §6). Pure constants: the services compare them with the injected clock.
 */

/** A `submitting` record whose write_started is older than this is taken as a crashed write (reconcilable). */
export const STUCK_WRITE_MS = 10 * 60 * 1000;

/**
 * How long the map API's capabilities are trusted once read: the first write after that (a new operator session,
 * in practice) reads them again. A status other than `online` is never kept.
 */
export const CAPABILITIES_MAX_AGE_MS = 10 * 60 * 1000;

/** How long a confirmed allow_write_api stays trusted before GET /api/0.6/permissions is asked again. */
export const PERMISSIONS_TTL_MS = 60 * 60 * 1000;
