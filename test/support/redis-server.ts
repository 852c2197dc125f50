import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from './processes.js';

/**
 * A redis-server of the test's own on a free loopback port (never the shared one), which the test may pause
 * (SIGSTOP), resume (SIGCONT), kill (SIGKILL) and start again on the same port.
 */
export class OwnRedisServer {
  private child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  static async start(): Promise<OwnRedisServer> {
    const server = new OwnRedisServer(await freePort());
    await server.restart();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** (Re)starts the server on its port and waits until it answers PING. */
  async restart(): Promise<void> {
    this.child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    const deadline = Date.now() + 10_000;
    for (;;) {
      const probe = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        if ((await probe.ping()) === 'PONG') return;
      } catch {
        if (Date.now() > deadline) throw new Error(`redis-server on ${this.port} did not start`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      } finally {
        probe.disconnect();
      }
    }
  }

  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
    this.child = null;
  }
}
