import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

type WorkerMessage = { type: 'ready'; port: number } | { type: 'error'; message: string };

function workerPath(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const compiled = join(here, 'embedded-database.worker.js');
  if (existsSync(compiled)) return compiled;
  // Running from TypeScript sources (tests): use the built worker.
  const built = join(here, '..', '..', 'dist', 'src', 'database', 'embedded-database.worker.js');
  if (existsSync(built)) return built;
  throw new Error('The embedded database worker is not built; run `npm run build` first.');
}

/** Starts the embedded PGlite server for `dataDir` in a child process and returns its loopback URL. */
export async function startEmbeddedDatabase(dataDir: string, port = 0): Promise<EmbeddedDatabase> {
  const child: ChildProcess = fork(workerPath(), [join(dataDir, 'pgdata'), String(port)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const readyPort = await new Promise<number>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`embedded database exited during start (code ${code})`));
    child.once('exit', onExit);
    child.on('message', (message: WorkerMessage) => {
      if (message.type === 'ready') {
        child.off('exit', onExit);
        resolve(message.port);
      } else if (message.type === 'error') {
        reject(new Error(`embedded database failed to start: ${message.message}`));
      }
    });
  });
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${readyPort}/postgres`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.send('stop');
      }),
  };
}
