/**
 * The TypeORM DataSource for the migration CLI (`typeorm migration:generate -d dist/ormconfig.js`). It needs
 * DATABASE_URL; the app itself builds the same options in src/database and also serves the embedded default.
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/app-config.js';
import { buildDataSourceOptions } from './src/database/data-source-options.js';

const config = loadConfig();
if (!config.database.url) {
  throw new Error(
    'Set DATABASE_URL to use the TypeORM CLI (the embedded database is started by `npm start`).',
  );
}

export default new DataSource(buildDataSourceOptions(config.database.url, 2));
