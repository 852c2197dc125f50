import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/data-source-options.js';
import { withClient } from './database.js';
import { freePort } from './processes.js';

const run = promisify(execFile);

/**
 * The PostgreSQL server binaries (initdb, pg_ctl): `PG_BIN_DIR`, else `pg_config --bindir`'s answer, else Debian's
 * path for PostgreSQL 15. Null when there are none (the suites that need them are then skipped, visibly).
 */
function serverBinaries(): string | null {
  const candidates = [process.env.PG_BIN_DIR, '/usr/lib/postgresql/15/bin'];
  try {
    candidates.splice(
      1,
      0,
      execFileSync('pg_config', ['--bindir'], { stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim(),
    );
  } catch {
    // No pg_config on PATH: the other candidates.
  }
  for (const dir of candidates) if (dir && existsSync(join(dir, 'pg_ctl'))) return dir;
  return null;
}

const BIN_DIR = serverBinaries();

/**
 * `describe` for suites that run their own PostgreSQL cluster (restarts, a frozen server). Skipped, visibly, where
 * no PostgreSQL server binaries are installed, unless REQUIRE_POSTGRES (CI) makes that a failure.
 */
export const describeWithOwnPostgres =
  BIN_DIR || process.env.REQUIRE_POSTGRES ? describe : describe.skip;

/** Sends `name` to `pid`; a process that ended meanwhile is fine. */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** The uid/gid the cluster runs as: `postgres` when the tests run as root (PostgreSQL refuses root), else ours. */
function clusterOwner(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  if (!line) throw new Error('running as root needs a postgres user to own the private cluster');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * A PostgreSQL cluster of the test's own (never the shared server): initdb into a temp dir, a free loopback port,
 * the app's migrations applied to its `bookcase` database. The test may restart it (`pg_ctl restart -m fast` or
 * `-m immediate`, i.e. a crash and recovery) and freeze it (SIGSTOP to the postmaster and every backend) and thaw it.
 * Every command runs asynchronously: the app under test shares this process's event loop.
 */
export class OwnPostgresCluster {
  private constructor(
    private readonly dir: string,
    private readonly binDir: string,
    private readonly owner: { uid: number; gid: number } | null,
    readonly port: number,
  ) {}

  static async start(): Promise<OwnPostgresCluster> {
    if (!BIN_DIR)
      throw new Error('No PostgreSQL server binaries (set PG_BIN_DIR or install postgresql)');
    const dir = mkdtempSync(join(tmpdir(), 'bookcase-own-pg-'));
    const owner = clusterOwner();
    if (owner) chownSync(dir, owner.uid, owner.gid);
    const cluster = new OwnPostgresCluster(dir, BIN_DIR, owner, await freePort());
    await cluster.command('initdb', [
      '-D',
      cluster.dataDir,
      '-U',
      'postgres',
      '--auth=trust',
      '--encoding=UTF8',
      '--locale=C.UTF-8',
      '--no-sync',
    ]);
    await cluster.pgCtl(['start']);
    await withClient(cluster.adminUrl, (client) => client.query('CREATE DATABASE bookcase'));
    const dataSource = new DataSource(buildDataSourceOptions(cluster.url, 2));
    await dataSource.initialize();
    try {
      await dataSource.runMigrations();
    } finally {
      await dataSource.destroy();
    }
    return cluster;
  }

  private get dataDir(): string {
    return join(this.dir, 'data');
  }

  /** The migrated application database. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/bookcase`;
  }

  private get adminUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** Stops the server (`fast`: sessions ended, a clean shutdown; `immediate`: a crash) and starts it again. */
  async restart(mode: 'fast' | 'immediate'): Promise<void> {
    await this.pgCtl(['restart', '-m', mode]);
  }

  /** SIGSTOP to the postmaster and every backend: connections stay open, nothing answers. */
  freeze(): void {
    // The postmaster first, so that no backend is forked after the list of its children was read.
    for (const pid of this.processes()) signal(pid, 'SIGSTOP');
    for (const pid of this.processes()) signal(pid, 'SIGSTOP');
  }

  thaw(): void {
    for (const pid of this.processes()) signal(pid, 'SIGCONT');
  }

  async stop(): Promise<void> {
    try {
      this.thaw();
      await this.pgCtl(['stop', '-m', 'immediate']);
    } catch {
      // Already stopped.
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }

  /** The postmaster (from postmaster.pid) and its children (every backend and auxiliary process). */
  private processes(): number[] {
    const file = join(this.dataDir, 'postmaster.pid');
    if (!existsSync(file)) return [];
    const postmaster = Number(readFileSync(file, 'utf8').split('\n')[0]);
    const children = readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          // /proc/PID/stat: "pid (comm) state ppid …"; comm may contain spaces, so read after the last ')'.
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
        } catch {
          return false;
        }
      })
      .map(Number);
    return [postmaster, ...children];
  }

  private pgCtl(args: string[]): Promise<void> {
    return this.command('pg_ctl', [
      '-D',
      this.dataDir,
      '-l',
      join(this.dir, 'server.log'),
      '-w',
      '-t',
      '60',
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`,
      ...args,
    ]);
  }

  /** Runs a server binary as the cluster's owner. */
  private async command(binary: string, args: string[]): Promise<void> {
    await run(join(this.binDir, binary), args, {
      ...(this.owner ? { uid: this.owner.uid, gid: this.owner.gid } : {}),
      cwd: this.dir,
      env: { PATH: process.env.PATH, LANG: 'C.UTF-8' },
    });
  }
}
