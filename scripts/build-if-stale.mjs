#!/usr/bin/env node
/**
 * `npm start`'s pre-step: runs `nest build` only when dist/ is missing or older than a source of it, so a restart
 * does not recompile an unchanged tree (about 10 s on these machines). A fresh clone has no dist/ and builds.
 * Sources: src/, migrations/, the tsconfig files, nest-cli.json and package-lock.json (a dependency
 * change can change the swagger plugin's output).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const stamp = join(root, 'dist', 'src', 'main.js');
const SOURCES = [
  'src',
  'migrations',
  'tsconfig.json',
  'tsconfig.build.json',
  'nest-cli.json',
  'package-lock.json',
];

/** The newest modification time under `path` (a file or a directory tree). */
function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs; // a deleted file changes its directory
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
const changed = SOURCES.map((source) => join(root, source)).find((path) => newest(path) > built);
if (!built || changed) {
  process.stdout.write(built ? `${changed} changed: building\n` : 'No build yet: building\n');
  const result = spawnSync('npx', ['nest', 'build'], { cwd: root, stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
