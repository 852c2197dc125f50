import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processAlive } from '../common/process-alive.js';

export interface EmbeddedDatabase {
  url: string;
  /** True when this process started the server (and stop() ends it); false when it joined a running one. */
  owned: boolean;
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

const urlFor = (port: number) => `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** The server another process already runs for this data directory, if any. */
async function runningServer(dataDir: string): Promise<number | null> {
  const file = join(dataDir, 'server.json');
  if (!existsSync(file)) return null;
  try {
    const { pid, port } = JSON.parse(readFileSync(file, 'utf8')) as {
      pid: number;
      port: number | null;
    };
    if (!processAlive(pid)) return null;
    if (port === null)
      throw new Error(
        `The embedded database in ${dataDir} is still starting (pid ${pid}); try again.`,
      );
    return (await portAnswers(port)) ? port : null;
  } catch (error) {
    if (error instanceof SyntaxError) return null;
    throw error;
  }
}

/**
 * V8 flags of the worker. PostgreSQL and PostGIS are 27 MB of WebAssembly: compiled by V8's baseline compiler
 * (Liftoff) only, the worker stays about 100 MB smaller than when hot functions are tiered up to TurboFan, and it
 * measured no slower per read, TurboFan's compile work included (docs/architecture.md). A command-line flag:
 * `v8.setFlagsFromString` inside the worker comes too late to change how WebAssembly is compiled.
 */
const WORKER_EXEC_ARGV = ['--liftoff-only'];

/** Creates a new database in a process of its own, which then exits (see the worker's `--prepare`). */
function prepareDatabase(directory: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = fork(workerPath(), ['--prepare', directory], {
      execArgv: WORKER_EXEC_ARGV,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let failure = '';
    child.on('message', (message: WorkerMessage) => {
      if (message.type === 'error') failure = message.message;
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve()
        : reject(
            new Error(`embedded database could not be created: ${failure || `exit code ${code}`}`),
          ),
    );
  });
}

/**
 * The embedded PGlite server for `dataDir` (`DATA_DIR/db`): joins the one another process runs for it, or starts
 * one in a child process. Returns its loopback URL.
 */
export async function startEmbeddedDatabase(dataDir: string, port = 0): Promise<EmbeddedDatabase> {
  const directory = join(dataDir, 'db');
  const existing = await runningServer(directory);
  if (existing !== null)
    return { url: urlFor(existing), owned: false, stop: () => Promise.resolve() };

  if (!existsSync(join(directory, 'pgdata', 'PG_VERSION'))) await prepareDatabase(directory);
  const child: ChildProcess = fork(workerPath(), [directory, String(port)], {
    execArgv: WORKER_EXEC_ARGV,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const readyPort = await new Promise<number>((resolve, reject) => {
    const onExit = (code: number | null) =>
      reject(new Error(`embedded database exited during start (code ${code})`));
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
  child.unref();
  child.channel?.unref();
  return {
    url: urlFor(readyPort),
    owned: true,
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
