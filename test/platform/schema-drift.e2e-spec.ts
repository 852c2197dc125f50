import { describeWithDatabaseServer } from '../support/app.js';
import { createTestDatabase, withClient, type TestDatabase } from '../support/database.js';
import { cleanEnv, runNode } from '../support/processes.js';

const SCRIPT = 'scripts/db-schema.mjs';

/**
 * Every schema change is a reviewable diff (issue 15): the migrated template's `pg_dump --schema-only` must equal
 * the committed migrations/schema.sql. After a deliberate migration, `npm run db:schema` rewrites the file.
 */
describeWithDatabaseServer('migrations/schema.sql', () => {
  let db: TestDatabase;
  const env = cleanEnv({});

  beforeEach(async () => {
    db = await createTestDatabase();
  });

  afterEach(async () => {
    await db?.drop();
  });

  it('matches the schema the migrations build', async () => {
    const result = await runNode(SCRIPT, ['--check', '--database-url', db.url], env);
    // The script's output says what drifted and how to accept it.
    expect({ code: result.code, output: result.stderr.trim() }).toEqual({ code: 0, output: '' });
    expect(result.stdout).toContain('matches the migrated schema');
  });

  it('fails, naming the difference, when the schema changes without the file', async () => {
    await withClient(db.url, (client) =>
      client.query('ALTER TABLE libraries ADD COLUMN drift_probe integer'),
    );
    const result = await runNode(SCRIPT, ['--check', '--database-url', db.url], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('npm run db:schema');
    expect(result.stderr).toContain('drift_probe integer');
  });
});
