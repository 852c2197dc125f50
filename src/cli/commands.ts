import { Database } from '../database/database.js';
import { StaffService } from '../users/staff.service.js';
import { exportCommand } from './commands/export.js';
import { importGeojsonCommand } from './commands/import-geojson.js';
import { mediaToS3Command } from './commands/media-to-s3.js';
import { seedCommand } from './commands/seed.js';
import { required, UsageError, type CliCommand } from './cli-command.js';
import { readSecret } from './password-input.js';

export { UsageError } from './cli-command.js';

export const SAFE_CREATE_STAFF =
  'printf \'%s\\n\' "$PW" | npm run cli -- create-staff --username U --email E';

export const COMMANDS: Record<string, CliCommand> = {
  migrate: {
    usage: 'migrate                      apply pending database migrations',
    options: {},
    async run(app) {
      // The context applies pending migrations as it starts; report what is recorded.
      const rows = await app
        .get(Database)
        .query<{ name: string }[]>('SELECT name FROM schema_migrations ORDER BY id');
      return `Database is up to date (${rows.length} migrations applied).`;
    },
  },
  'create-staff': {
    usage:
      'create-staff --username U --email E [--password P]   create a staff account or promote an existing one (password: prompt, or the first line of stdin; --password works but leaks)',
    options: {
      username: { type: 'string' },
      email: { type: 'string' },
      // The form decisions.md gives staff (section 5). Accepted, with a warning: a password in argv is visible in
      // `ps`, shell history and npm's command banner, so the prompt and standard input stay the documented way.
      password: { type: 'string' },
    },
    async prepare(values) {
      required(values, 'username');
      required(values, 'email');
      if (values.password !== undefined) {
        if (!values.password) throw new UsageError('--password must not be empty.');
        process.stderr.write(
          `Warning: a password given with --password is visible in shell history and process lists. Prefer the prompt, or standard input:\n  ${SAFE_CREATE_STAFF}\n`,
        );
        values.secret = values.password;
        return;
      }
      const secret = await readSecret('Password:');
      if (!secret) throw new UsageError('No password given (standard input was empty).');
      values.secret = secret;
    },
    async run(app, values) {
      const result = await app.get(StaffService).createOrPromote({
        username: required(values, 'username'),
        email: required(values, 'email'),
        password: required(values, 'secret'),
      });
      return result.outcome === 'created'
        ? `Created staff user ${values.username} (id ${result.id}).`
        : `Promoted ${values.username} (id ${result.id}) to staff.`;
    },
  },
  'import-geojson': importGeojsonCommand,
  seed: seedCommand,
  export: exportCommand,
  'media-to-s3': mediaToS3Command,
};
