/** Injection tokens of the outbound clients (null when their settings are missing). */
export const MAP_QUERY_CLIENT = Symbol('MAP_QUERY_CLIENT');
export const MAP_API_CLIENT = Symbol('MAP_API_CLIENT');
