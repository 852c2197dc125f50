import pg from 'pg';
import type { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import { ENTITIES } from './entities.js';

export interface DatabaseTimeouts {
  /** Server-side limit per statement (0 = none). */
  statementTimeoutSeconds: number;
  /** The server ends a session left idle inside a transaction this long (0 = none). */
  idleInTransactionTimeoutSeconds: number;
  /** Longest wait for a pool connection (a free one or a new one), then the query fails (→ 503). */
  poolWaitSeconds: number;
}

export const DEFAULT_DATABASE_TIMEOUTS: DatabaseTimeouts = {
  statementTimeoutSeconds: 0,
  idleInTransactionTimeoutSeconds: 0,
  poolWaitSeconds: 10,
};

/**
 * node-postgres emits 'error' on a client whose connection dies (server restart, pg_terminate_backend) and nobody
 * listens while the client is checked out between two queries: an unhandled 'error' event would end the process.
 * Every client of the pool therefore listens for good; the failure still reaches the query that was running and
 * makes the client unusable for the next one (which fails and is answered 503).
 */
class ListeningClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on('error', () => undefined);
  }
}

export function buildDataSourceOptions(
  url: string,
  poolSize = 10,
  timeouts: DatabaseTimeouts = DEFAULT_DATABASE_TIMEOUTS,
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    extra: {
      max: poolSize,
      connectionTimeoutMillis: timeouts.poolWaitSeconds * 1000,
      // Startup parameters of every connection (node-postgres omits them when 0).
      statement_timeout: timeouts.statementTimeoutSeconds * 1000,
      idle_in_transaction_session_timeout: timeouts.idleInTransactionTimeoutSeconds * 1000,
      keepAlive: true,
      Client: ListeningClient,
    },
  };
}
