import { DataSource } from 'typeorm';
import { StaffService } from '../users/staff.service.js';
import { exportCommand } from './commands/export.js';
import { importGeojsonCommand } from './commands/import-geojson.js';
import { seedCommand } from './commands/seed.js';
import { required, type CliCommand } from './cli-command.js';

export { UsageError } from './cli-command.js';

export const COMMANDS: Record<string, CliCommand> = {
  migrate: {
    usage: 'migrate                      apply pending database migrations',
    options: {},
    async run(app) {
      // The context applies pending migrations as it starts; report what is recorded.
      const rows = await app
        .get(DataSource)
        .query<{ name: string }[]>('SELECT name FROM schema_migrations ORDER BY id');
      return `Database is up to date (${rows.length} migrations applied).`;
    },
  },
  'create-staff': {
    usage:
      'create-staff --username U --email E --password P   create a staff account or promote an existing one',
    options: {
      username: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
    },
    async run(app, values) {
      const result = await app.get(StaffService).createOrPromote({
        username: required(values, 'username'),
        email: required(values, 'email'),
        password: required(values, 'password'),
      });
      return result.outcome === 'created'
        ? `Created staff user ${values.username} (id ${result.id}).`
        : `Promoted ${values.username} (id ${result.id}) to staff.`;
    },
  },
  'import-geojson': importGeojsonCommand,
  seed: seedCommand,
  export: exportCommand,
};
