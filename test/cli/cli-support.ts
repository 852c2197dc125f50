/**
 * Shared set-up of the CLI suites: a database of their own (no app: the built CLI writes to it), a data folder, the
 * CLI's environment pointing at both, and apps started on the database to read what the CLI wrote.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, runNode } from '../support/processes.js';
import { useTestSuite } from '../support/suite.js';

export const CLI = 'dist/src/cli/main.js';

/**
 * `name` names the data folder; with `media` the CLI keeps media in `<data folder>/media`; with `dataDir: false` the
 * CLI is given no data folder at all.
 */
export function useCliSuite(name: string, options: { media?: boolean; dataDir?: boolean } = {}) {
  const { db, startApp } = useTestSuite({ app: false });
  const state = { dir: '', env: {} as NodeJS.ProcessEnv };

  beforeAll(() => {
    state.dir = mkdtempSync(join(tmpdir(), `bookcase-${name}-`));
    state.env = cleanEnv({
      DATABASE_URL: db.url,
      JWT_SECRET: 'c'.repeat(40),
      ...(options.dataDir === false ? {} : { DATA_DIR: state.dir }),
      ...(options.media ? { MEDIA_ROOT: join(state.dir, 'media') } : {}),
    });
  });

  afterAll(() => {
    rmSync(state.dir, { recursive: true, force: true });
  });

  return {
    db,
    startApp,
    /** The data folder (once the suite is up). */
    get dir() {
      return state.dir;
    },
    /** Runs the built CLI with these arguments in the suite's environment (`input` on its standard input). */
    run: (args: string[], input?: string) => runNode(CLI, args, state.env, undefined, input),
  };
}
