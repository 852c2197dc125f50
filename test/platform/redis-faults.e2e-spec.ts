/**
 * Issue 14, item 1: Redis is an accelerator, never a single point of failure. Two app instances share a
 * redis-server of this test's own; it is frozen (SIGSTOP) and killed (SIGKILL) under a bounded load. Throughout:
 * no 5xx on rate-limited routes or /statistics/, p99 under 1 s, limits still applied (in process) during the
 * outage and shared again once Redis answers; /ready stays 200 with Redis reported degraded.
 */
import type { AddressInfo } from 'node:net';
import type { TestApp } from '../support/app.js';
import { FakeClock } from '../support/clock.js';
import { insertLibraries } from '../support/libraries.js';
import { OwnRedisServer } from '../support/redis-server.js';
import { useTestSuite } from '../support/suite.js';

const LOGIN_LIMIT = 3;
const WINDOW_MS = 300_000;
const LOAD_REQUESTS = 240;
const CONCURRENCY = 6;

interface LoadReport {
  statuses: Record<number, number>;
  p50: number;
  p99: number;
  max: number;
}

describe('Redis faults (issue 14)', () => {
  const clock = new FakeClock();
  const logs: string[] = [];
  const {
    db,
    t: a,
    fakes: { redis },
    startApp,
  } = useTestSuite({
    fakes: async () => ({ redis: await OwnRedisServer.start() }),
    env: ({ redis }) => ({
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: 'faults:',
      REDIS_COMMAND_TIMEOUT_MS: '250',
      REDIS_RETRY_AFTER_MS: '200',
      RATE_LIMIT_READ: '1000000',
      RATE_LIMIT_LOGIN: String(LOGIN_LIMIT),
    }),
    clock,
    logDestination: { write: (line: string) => void logs.push(line) },
  });
  let b: TestApp;
  const base: Record<'a' | 'b', string> = { a: '', b: '' };
  const figures: Record<string, LoadReport> = {};
  const redisLog = (text: string) => logs.filter((line) => line.includes(text)).length;

  async function listen(t: TestApp): Promise<string> {
    const server = t.app.getHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  beforeAll(async () => {
    await insertLibraries(
      db.url,
      Array.from({ length: 20 }, (_, i) => ({
        name: `Shelf ${i}`,
        city: i % 2 ? 'Berlin' : 'Köln',
      })),
    );
    // Nest's static logger is one per process: both instances log to the one given last, so both get the same.
    b = await startApp();
    base.a = await listen(a);
    base.b = await listen(b);
    // Warm-up (first compilations, pool connections), so the baseline measures the steady state.
    for (const path of ['/api/v1/libraries/', '/api/v1/statistics/', '/api/v1/libraries/latest']) {
      await Promise.all(
        Array.from({ length: CONCURRENCY }, () =>
          fetch(`${base.a}${path}`).then((res) => res.arrayBuffer()),
        ),
      );
    }
  });

  afterAll(() => {
    // The figures the README's Reliability section quotes.
    process.stdout.write(`redis fault figures: ${JSON.stringify(figures)}\n`);
  });

  /** A login attempt with an empty body: counted by the login tier, then refused by validation (no database). */
  const login = async (instance: 'a' | 'b') =>
    (
      await fetch(`${base[instance]}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      })
    ).status;

  /** `LOAD_REQUESTS` GETs of rate-limited routes and /statistics/, `CONCURRENCY` at a time, against A. */
  async function load(): Promise<LoadReport> {
    const paths = ['/api/v1/libraries/', '/api/v1/statistics/', '/api/v1/libraries/latest'];
    const latencies: number[] = [];
    const statuses: Record<number, number> = {};
    let next = 0;
    const worker = async () => {
      while (next < LOAD_REQUESTS) {
        const path = paths[next % paths.length];
        next += 1;
        const started = performance.now();
        const res = await fetch(`${base.a}${path}`);
        await res.arrayBuffer();
        latencies.push(performance.now() - started);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    latencies.sort((x, y) => x - y);
    const at = (q: number) =>
      Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]);
    return { statuses, p50: at(0.5), p99: at(0.99), max: at(1) };
  }

  async function ready(
    instance: 'a' | 'b',
  ): Promise<{ status: number; body: { checks: Record<string, string> } }> {
    const res = await fetch(`${base[instance]}/ready`);
    return { status: res.status, body: (await res.json()) as { checks: Record<string, string> } };
  }

  /** Polls /ready of both instances until Redis is reported up again (the breaker's half-open probe). */
  async function untilRecovered(): Promise<void> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const states = [(await ready('a')).body.checks.redis, (await ready('b')).body.checks.redis];
      if (states.every((state) => state === 'up')) return;
      if (Date.now() > deadline)
        throw new Error(`Redis not reported up again: ${states.join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** The login tier across both instances: LOGIN_LIMIT attempts spread over A and B, then B refuses. */
  async function expectSharedLimit(): Promise<void> {
    clock.advance(WINDOW_MS + 1_000); // a fresh window in Redis and in either process
    const allowed = [await login('a'), await login('a')];
    for (let i = 2; i < LOGIN_LIMIT; i += 1) allowed.push(await login('b'));
    expect(allowed).toEqual(Array(LOGIN_LIMIT).fill(422));
    expect(await login('b')).toBe(429);
    expect(await login('a')).toBe(429);
  }

  /** While Redis is out, each instance counts on its own: A refuses after LOGIN_LIMIT, B still has its own. */
  async function expectPerInstanceLimit(): Promise<void> {
    clock.advance(WINDOW_MS + 1_000);
    const onA = [];
    for (let i = 0; i <= LOGIN_LIMIT; i += 1) onA.push(await login('a'));
    expect(onA).toEqual([...Array(LOGIN_LIMIT).fill(422), 429]);
    expect(await login('b')).toBe(422);
  }

  function expectHealthyUnderLoad(report: LoadReport): void {
    expect(Object.keys(report.statuses)).toEqual(['200']);
    expect(report.p99).toBeLessThan(1_000);
  }

  it('healthy: limits are shared through Redis; the baseline load', async () => {
    expect(await ready('a')).toEqual({
      status: 200,
      body: { status: 'ok', checks: { database: 'up', redis: 'up' } },
    });
    await expectSharedLimit();
    figures.healthy = await load();
    expectHealthyUnderLoad(figures.healthy);
  });

  it('frozen (SIGSTOP): no 5xx, p99 < 1 s, limits in process, /ready 200 degraded; shared again after SIGCONT', async () => {
    redis.pause();
    try {
      figures.frozen = await load();
      expectHealthyUnderLoad(figures.frozen);
      await expectPerInstanceLimit();
      const probe = await ready('a');
      expect(probe).toEqual({
        status: 200,
        body: { status: 'ok', checks: { database: 'up', redis: 'degraded' } },
      });
    } finally {
      redis.resume();
    }
    await untilRecovered();
    await expectSharedLimit();
  });

  it('killed (SIGKILL): no 5xx, p99 < 1 s, limits in process; shared again once a new server runs', async () => {
    await redis.kill();
    figures.killed = await load();
    expectHealthyUnderLoad(figures.killed);
    await expectPerInstanceLimit();
    expect((await ready('b')).body.checks).toEqual({ database: 'up', redis: 'degraded' });
    await redis.restart();
    await untilRecovered();
    await expectSharedLimit();
  });

  it('logged once per transition, not per request', () => {
    // Two outages seen by two instances: at least four transitions each way, each logged once (a loaded machine
    // may add a slow command, hence no exact count), and never once per request (hundreds were served).
    const down = redisLog('Redis is unreachable or slow');
    expect(down).toBe(redisLog('Redis answers again'));
    expect(down).toBeGreaterThanOrEqual(4);
    expect(down).toBeLessThan(20);
  });
});
