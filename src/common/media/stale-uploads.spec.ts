import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeStaleUploads, STALE_UPLOAD_AGE_MS } from './stale-uploads.js';

describe('removeStaleUploads', () => {
  let directory: string;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'stale-uploads-'));
  });

  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it("removes files of ended processes and old files, and keeps running processes' files", async () => {
    // A process that has ended: its pid is free (until the system reuses it, which the age rule covers).
    const ended = spawnSync(process.execPath, ['-e', '']).pid;
    const files = {
      ended: `${ended}-aaaa`,
      mine: `${process.pid}-bbbb`,
      parent: `${process.ppid}-cccc`,
      oldOfRunning: `${process.ppid}-dddd`,
      other: 'not-an-upload',
    };
    for (const name of Object.values(files)) await writeFile(join(directory, name), 'x');
    const old = (Date.now() - STALE_UPLOAD_AGE_MS - 60_000) / 1000;
    await utimes(join(directory, files.oldOfRunning), old, old);

    const removed = await removeStaleUploads(directory);

    expect(removed.sort()).toEqual([files.ended, files.oldOfRunning].sort());
    expect((await readdir(directory)).sort()).toEqual(
      [files.mine, files.parent, files.other].sort(),
    );
  });

  it('does nothing when the directory does not exist', async () => {
    await expect(removeStaleUploads(join(directory, 'missing'))).resolves.toEqual([]);
  });
});
