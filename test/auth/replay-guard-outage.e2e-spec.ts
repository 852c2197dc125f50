/**
 * Issue 14, item 4: the identity-token replay guard keeps the database as its record of truth, so a token used
 * while Redis was up cannot be replayed once Redis is gone, and one used while Redis was down cannot be replayed
 * once Redis is back (empty, as after a restart). Redis is this file's own server, killed between two uses.
 */
import { createHash } from 'node:crypto';
import request from 'supertest';
import { Redis } from 'ioredis';
import { describeWithRedis } from '../support/app.js';
import { FakeClock } from '../support/clock.js';
import { countRows } from '../support/database.js';
import { startFakeJwks } from '../support/fake-jwks.js';
import { RedisBreaker } from '../../src/common/redis/redis-breaker.js';
import { OwnRedisServer } from '../support/redis-server.js';
import { useTestSuite } from '../support/suite.js';

const INVALID_TOKEN = { message: 'Invalid identity token.', details: null };
const GOOGLE_AUD = 'ios-client.apps.googleusercontent.com';
const PREFIX = 'replay-outage:';

let seq = 0;

describeWithRedis('identity-token replay guard through a Redis outage (issue 14)', () => {
  const clock = new FakeClock();
  const {
    db,
    t,
    fakes: { google, redis },
  } = useTestSuite({
    fakes: async () => ({
      google: await startFakeJwks(() => clock.now()),
      redis: await OwnRedisServer.start(),
    }),
    clock,
    env: ({ google, redis }) => ({
      RATE_LIMIT_ENABLED: 'false',
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: PREFIX,
      REDIS_RETRY_AFTER_MS: '100',
      GOOGLE_CLIENT_IDS: GOOGLE_AUD,
      GOOGLE_JWKS_URL: google.url,
    }),
  });

  const jti = (n: number) => `jti-${process.pid}-${n}`;
  const token = () =>
    google.sign({
      iss: 'https://accounts.google.com',
      aud: GOOGLE_AUD,
      sub: `replay-${process.pid}-${(seq += 1)}`,
      jti: jti(seq),
    });
  const signIn = (idToken: string) =>
    request(t.http).post('/api/v1/auth/social').send({ provider: 'google', id_token: idToken });
  const claimedInDatabase = () =>
    countRows(db.url, 'SELECT count(*)::int AS n FROM used_identity_tokens');
  /** Whether Redis holds the replay key of the token with this jti. */
  const inRedis = async (jti: string) => {
    const client = new Redis(redis.url);
    try {
      const key = `${PREFIX}social-jti:google:jti:${createHash('sha256').update(jti).digest('hex')}`;
      return (await client.exists(key)) === 1;
    } finally {
      client.disconnect();
    }
  };

  /** Polls the app's breaker (half-open probe) until it uses Redis again. */
  async function redisUpAgain(): Promise<void> {
    const breaker = t.app.get(RedisBreaker);
    const deadline = Date.now() + 15_000;
    while ((await breaker.ping()) !== 'up') {
      if (Date.now() > deadline) throw new Error('the app did not go back to Redis');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('a token used before the outage is refused during it; one used during it is refused after it', async () => {
    const before = await token();
    expect((await signIn(before)).status).toBe(200);
    expect(await claimedInDatabase()).toBe(1);
    expect(await inRedis(jti(seq))).toBe(true);

    await redis.kill();
    const replay = await signIn(before);
    expect(replay.status).toBe(400);
    expect(replay.body).toEqual(INVALID_TOKEN);

    const during = await token();
    expect((await signIn(during)).status).toBe(200);
    expect(await claimedInDatabase()).toBe(2);

    // Redis comes back empty (no persistence): it knows neither token, the database knows both.
    await redis.restart();
    await redisUpAgain();
    expect(await inRedis(jti(1))).toBe(false);
    for (const used of [before, during]) {
      const res = await signIn(used);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(INVALID_TOKEN);
    }

    // After recovery, new claims are written through to Redis again.
    const after = await token();
    expect((await signIn(after)).status).toBe(200);
    expect(await inRedis(jti(seq))).toBe(true);
    expect(await claimedInDatabase()).toBe(3);
  });
});
