import request from 'supertest';
import { bearer, loginUser, registerUser } from '../support/auth.js';
import { NOT_FOUND, UNAUTHORIZED } from '../support/errors.js';
import { useTestSuite } from '../support/suite.js';

const HELD_ELSEWHERE = {
  message: 'This device token is registered to another account.',
  details: null,
};

let seq = 0;
const deviceToken = () => `apns-${process.pid}-${(seq += 1)}-${'a1'.repeat(28)}`;

describe('push device tokens (decisions §3)', () => {
  const devices = '/api/v1/auth/devices';
  const register = (user: { access: string }, token: string, environment = 'production') =>
    request(t.http)
      .post(devices)
      .set('Authorization', bearer(user.access))
      .send({ token, environment });
  const unregister = (user: { access: string }, token: string) =>
    request(t.http)
      .delete(`${devices}/${encodeURIComponent(token)}`)
      .set('Authorization', bearer(user.access));

  const { t, alice, bob } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false' },
    users: { alice: 'user', bob: 'user' },
  });

  it('POST 201 {token, environment, is_active} for a new token', async () => {
    const token = deviceToken();
    const res = await register(alice, token, 'sandbox').expect(201);
    expect(res.body).toEqual({ token, environment: 'sandbox', is_active: true });
    expect(res.headers['cache-control']).toBe('private, no-store');
  });

  it('POST 200 with the environment updated when the caller already holds the token', async () => {
    const token = deviceToken();
    await register(alice, token, 'sandbox').expect(201);
    const res = await register(alice, token, 'production').expect(200);
    expect(res.body).toEqual({ token, environment: 'production', is_active: true });
  });

  it('the same user from another session also holds it (200)', async () => {
    const token = deviceToken();
    await register(alice, token).expect(201);
    const again = await loginUser(t.http, alice.username, alice.password);
    await register(again, token).expect(200);
  });

  it('POST 409 when another account holds the token with a live session: no silent takeover', async () => {
    const token = deviceToken();
    await register(alice, token).expect(201);
    const res = await register(bob, token).expect(409);
    expect(res.body).toEqual(HELD_ELSEWHERE);
    await unregister(bob, token).expect(404);
    await unregister(alice, token).expect(204);
  });

  it('moves once the holder unregistered it', async () => {
    const token = deviceToken();
    await register(alice, token).expect(201);
    await unregister(alice, token).expect(204);
    await register(bob, token).expect(201);
    await unregister(alice, token).expect(404);
    await unregister(bob, token).expect(204);
  });

  it('moves once the holder’s session on the device was revoked (password changed elsewhere)', async () => {
    const holder = await registerUser(t.http);
    const onDevice = await loginUser(t.http, holder.username, holder.password);
    const token = deviceToken();
    await register(onDevice, token).expect(201);
    await register(bob, token).expect(409);
    await request(t.http)
      .put('/api/v1/auth/me/password')
      .set('Authorization', bearer(holder.access))
      .send({
        current_password: holder.password,
        new_password: 'Amber-Harbour-5521',
        new_password_confirm: 'Amber-Harbour-5521',
      })
      .expect(200);
    const moved = await register(bob, token, 'sandbox').expect(201);
    expect(moved.body).toEqual({ token, environment: 'sandbox', is_active: true });
    await unregister(holder, token).expect(404);
  });

  it('moves once the holding account was deleted', async () => {
    const holder = await registerUser(t.http);
    const token = deviceToken();
    await register(holder, token).expect(201);
    await request(t.http)
      .delete('/api/v1/auth/me')
      .set('Authorization', bearer(holder.access))
      .send({ password: holder.password })
      .expect(200);
    await register(bob, token).expect(201);
  });

  it('DELETE 204 with an empty body for the caller’s own token', async () => {
    const token = deviceToken();
    await register(alice, token).expect(201);
    const res = await unregister(alice, token).expect(204);
    expect(res.text).toBe('');
  });

  it('DELETE 404 Not found. for an unknown token or another user’s', async () => {
    const token = deviceToken();
    await register(alice, token).expect(201);
    expect((await unregister(bob, token).expect(404)).body).toEqual(NOT_FOUND);
    expect((await unregister(bob, 'no-such-token').expect(404)).body).toEqual(NOT_FOUND);
    await unregister(alice, token).expect(204);
  });

  it('401 Unauthorized without a token, on both routes', async () => {
    expect(
      (await request(t.http).post(devices).send({ token: 'x', environment: 'sandbox' }).expect(401))
        .body,
    ).toEqual(UNAUTHORIZED);
    expect((await request(t.http).delete(`${devices}/x`).expect(401)).body).toEqual(UNAUTHORIZED);
  });

  it('422 for a bad environment or a missing/blank token', async () => {
    const fresh = await registerUser(t.http);
    for (const body of [
      { token: 'abc', environment: 'staging' },
      { environment: 'sandbox' },
      { token: '   ', environment: 'sandbox' },
      { token: 'has space', environment: 'sandbox' },
      { token: 'x'.repeat(513), environment: 'sandbox' },
    ]) {
      const res = await request(t.http)
        .post(devices)
        .set('Authorization', bearer(fresh.access))
        .send(body)
        .expect(422);
      expect(res.body.message).toBe('Validation error.');
    }
  });

  // Moves the clock 30 days: keep it last.
  it('moves once the holder’s refresh session expired', async () => {
    const holder = await registerUser(t.http);
    const token = deviceToken();
    await register(holder, token).expect(201);
    t.clock.advance(30 * 86400 * 1000);
    const late = await registerUser(t.http);
    await register(late, token).expect(201);
  });
});
