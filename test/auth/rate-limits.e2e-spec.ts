import request from 'supertest';
import { bearer, TEST_PASSWORD } from '../support/auth.js';
import { useTestSuite } from '../support/suite.js';

function tooMany(message: string) {
  return { message, details: { retry_after: expect.any(Number) } };
}

describe('auth rate limits (spec Limits, decisions §2): the spec tiers, per endpoint and client IP', () => {
  const api = (path: string) => `/api/v1/auth/${path}`;
  const tokens: { access: string; refresh: string }[] = [];

  // Spec defaults for the auth tiers; read/write lowered so their tier is visible in a few requests.
  const { t } = useTestSuite({
    env: { RATE_LIMIT_READ: '3', RATE_LIMIT_WRITE: '2' },
  });

  it('POST /auth/register: 5 per window, then 429 Too many registration attempts. Please try again later.', async () => {
    for (let i = 0; i < 5; i += 1) {
      const res = await request(t.http)
        .post(api('register'))
        .send({
          username: `limited_${i}`,
          email: `limited_${i}@example.org`,
          password: TEST_PASSWORD,
        })
        .expect(201);
      tokens.push(res.body);
    }
    const res = await request(t.http)
      .post(api('register'))
      .send({ username: 'limited_6', email: 'limited_6@example.org', password: TEST_PASSWORD })
      .expect(429);
    expect(res.body).toEqual(tooMany('Too many registration attempts. Please try again later.'));
    expect(res.body.details.retry_after).toBeGreaterThanOrEqual(1);
    expect(res.body.details.retry_after).toBeLessThanOrEqual(300);
  });

  it('POST /auth/login: 10 per window (failures count), then 429 Too many login attempts. Please try again later.', async () => {
    for (let i = 0; i < 10; i += 1) {
      await request(t.http)
        .post(api('login'))
        .send({ username: 'limited_0', password: 'wrong-password' })
        .expect(401);
    }
    const res = await request(t.http)
      .post(api('login'))
      .send({ username: 'limited_0', password: TEST_PASSWORD })
      .expect(429);
    expect(res.body).toEqual(tooMany('Too many login attempts. Please try again later.'));
  });

  it('POST /auth/refresh: 15 per window, then 429 Too many refresh attempts. Please try again later.', async () => {
    for (let i = 0; i < 15; i += 1) {
      await request(t.http).post(api('refresh')).send({ refresh: tokens[0].refresh }).expect(200);
    }
    const res = await request(t.http)
      .post(api('refresh'))
      .send({ refresh: tokens[0].refresh })
      .expect(429);
    expect(res.body).toEqual(tooMany('Too many refresh attempts. Please try again later.'));
  });

  it('POST /auth/social: 10 per window, then 429 Too many social login attempts. Please try again later.', async () => {
    for (let i = 0; i < 10; i += 1) {
      await request(t.http)
        .post(api('social'))
        .send({ provider: 'apple', id_token: 'x'.repeat(40) })
        .expect(400);
    }
    const res = await request(t.http)
      .post(api('social'))
      .send({ provider: 'apple', id_token: 'x'.repeat(40) })
      .expect(429);
    expect(res.body).toEqual(tooMany('Too many social login attempts. Please try again later.'));
  });

  it('GET /auth/me is in the read tier', async () => {
    for (let i = 0; i < 3; i += 1) {
      await request(t.http)
        .get(api('me'))
        .set('Authorization', bearer(tokens[0].access))
        .expect(200);
    }
    const res = await request(t.http)
      .get(api('me'))
      .set('Authorization', bearer(tokens[0].access))
      .expect(429);
    expect(res.body).toEqual(tooMany('Too many requests. Please try again later.'));
  });

  it.each([
    ['PATCH /auth/me/email', 'patch', 'me/email', { email: 'nope' }],
    [
      'PUT /auth/me/password',
      'put',
      'me/password',
      { current_password: 'x', new_password: 'y', new_password_confirm: 'y' },
    ],
    ['DELETE /auth/me', 'delete', 'me', { password: 'wrong' }],
    ['POST /auth/devices', 'post', 'devices', { token: 'tier-check', environment: 'sandbox' }],
  ] as const)('%s is in the write tier', async (_name, method, path, body) => {
    for (let i = 0; i < 2; i += 1) {
      const ok = await request(t.http)
        [method](api(path))
        .set('Authorization', bearer(tokens[1].access))
        .send(body);
      expect(ok.status).not.toBe(429);
    }
    const res = await request(t.http)
      [method](api(path))
      .set('Authorization', bearer(tokens[1].access))
      .send(body)
      .expect(429);
    expect(res.body).toEqual(tooMany('Too many requests. Please try again later.'));
  });

  it('DELETE /auth/devices/{token} is in the write tier', async () => {
    for (let i = 0; i < 2; i += 1) {
      await request(t.http)
        .delete(api('devices/unknown'))
        .set('Authorization', bearer(tokens[2].access))
        .expect(404);
    }
    await request(t.http)
      .delete(api('devices/unknown'))
      .set('Authorization', bearer(tokens[2].access))
      .expect(429);
  });

  it('frees the window after 300 s', async () => {
    t.clock.advance(300_000);
    await request(t.http)
      .post(api('register'))
      .send({ username: 'limited_7', email: 'limited_7@example.org', password: TEST_PASSWORD })
      .expect(201);
  });
});
