import { verify } from '@node-rs/argon2';
import { countRows, queryRows } from '../support/database.js';
import { cleanEnv, runNode } from '../support/processes.js';
import { CLI, useCliSuite } from '../cli/cli-support.js';

describe('CLI (npm run cli -- …)', () => {
  const cli = useCliSuite('cli', { dataDir: false });
  const { db } = cli;

  const staffRow = async (username: string) =>
    (
      await queryRows<{
        username: string;
        email: string;
        is_staff: boolean;
        password_hash: string;
      }>(
        db.url,
        'SELECT username, email, is_staff, password_hash FROM users WHERE lower(username) = lower($1)',
        [username],
      )
    )[0];

  it('create-staff creates a staff account with an argon2id password hash', async () => {
    const result = await cli.run(
      ['create-staff', '--username', 'mod', '--email', 'Mod@Example.com'],
      'a-long-passphrase\n',
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Created staff user mod/);
    const row = await staffRow('mod');
    expect(row).toMatchObject({ username: 'mod', email: 'mod@example.com', is_staff: true });
    expect(row.password_hash).toMatch(/^\$argon2id\$/);
  });

  it('create-staff promotes an existing account instead of duplicating it', async () => {
    await queryRows(
      db.url,
      "INSERT INTO users (username, email, is_staff) VALUES ('reader', 'reader@example.com', false)",
    );
    const result = await cli.run(
      ['create-staff', '--username', 'Reader', '--email', 'reader@example.com'],
      'another-passphrase\n',
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Promoted Reader/);
    expect(await staffRow('reader')).toMatchObject({ is_staff: true });
    expect(
      await countRows(
        db.url,
        "SELECT count(*)::int AS n FROM users WHERE lower(username) = 'reader'",
      ),
    ).toBe(1);
  });

  it('refuses an email that belongs to another account', async () => {
    const result = await cli.run(
      ['create-staff', '--username', 'someone', '--email', 'mod@example.com'],
      'a-long-passphrase\n',
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/email belongs to another account/);
  });

  it('create-staff takes --password as decisions.md gives it, warning that argv leaks, and otherwise reads stdin', async () => {
    const given = await cli.run(
      [
        'create-staff',
        '--username',
        'leaky',
        '--email',
        'leaky@example.com',
        '--password',
        'in-argv-passphrase',
      ],
      'from-stdin-pass\n',
    );
    expect(given.code).toBe(0);
    expect(given.stdout).toMatch(/Created staff user leaky/);
    expect(given.stderr).toMatch(/Warning: a password given with --password is visible/);
    expect(given.stderr).toContain(
      `printf '%s\\n' "$PW" | npm run cli -- create-staff --username U --email E`,
    );
    const leaky = await staffRow('leaky');
    expect(await verify(leaky.password_hash, 'in-argv-passphrase')).toBe(true);
    expect(await verify(leaky.password_hash, 'from-stdin-pass')).toBe(false);

    const blank = await cli.run(
      ['create-staff', '--username', 'blank', '--email', 'blank@example.com', '--password', ''],
      'from-stdin-pass\n',
    );
    expect(blank.code).toBe(64);
    expect(blank.stderr).toMatch(/--password must not be empty/);
    expect(await staffRow('blank')).toBeUndefined();

    // Only the first line counts; the password never appears in the child's argv.
    const args = ['create-staff', '--username', 'piped', '--email', 'piped@example.com'];
    const piped = await cli.run(args, 'piped-passphrase\nsecond line\n');
    expect(piped.code).toBe(0);
    expect(args.join(' ')).not.toContain('piped-passphrase');
    const row = await staffRow('piped');
    expect(row).toMatchObject({ is_staff: true });
    expect(await verify(row.password_hash, 'piped-passphrase')).toBe(true);
    const audit = await queryRows(
      db.url,
      "SELECT kind, actor_id, details FROM moderation_audit_events WHERE details->'user'->>'username' = 'piped'",
    );
    expect(audit).toEqual([
      {
        kind: 'staff_created',
        actor_id: null,
        details: { user: { id: expect.any(Number), username: 'piped' }, via: 'cli' },
      },
    ]);

    const empty = await cli.run(args, '');
    expect(empty.code).toBe(64);
    expect(empty.stderr).toMatch(/No password given/);
  });

  it('explains a missing option or an unknown command with exit code 64', async () => {
    const missing = await cli.run(['create-staff', '--username', 'x']);
    expect(missing.code).toBe(64);
    expect(missing.stderr).toMatch(/--email is required/);
    const unknown = await cli.run(['frobnicate']);
    expect(unknown.code).toBe(64);
    expect(unknown.stderr).toMatch(/unknown command: frobnicate/);
  });

  it('migrate reports an up-to-date database', async () => {
    const result = await cli.run(['migrate']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/up to date \(\d+ migrations applied\)/);
  });

  it('fails fast listing every configuration problem', async () => {
    const result = await runNode(
      CLI,
      ['migrate'],
      cleanEnv({ DATABASE_URL: 'mysql://x', PORT: 'x' }),
    );
    expect(result.code).toBe(78);
    expect(result.stderr).toMatch(/DATABASE_URL/);
    expect(result.stderr).toMatch(/PORT/);
  });
});
