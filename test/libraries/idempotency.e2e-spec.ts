/**
 * Issue 14, item 3: `Idempotency-Key` on POST /libraries/. A retry with the same key and request answers the
 * original 201 and body without creating again (also when the retries race), the same key with another request is
 * 409, a malformed key 422 at ["header", "Idempotency-Key"], keys are per user and expire after
 * IDEMPOTENCY_KEY_TTL_HOURS (then swept). Requests without the header behave as before.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { IdempotencyService } from '../../src/common/idempotency/idempotency.service.js';
import { OrphanMediaSweep } from '../../src/common/media/orphan-media-sweep.js';
import { loginUser, type RegisteredUser } from '../support/auth.js';
import { FakeClock } from '../support/clock.js';
import { withClient } from '../support/database.js';
import {
  insertLibrary,
  jpeg,
  mediaFiles,
  multipart,
  submissionFields,
  type FormFields,
  type PhotoPart,
} from '../support/libraries.js';
import { auditMedia } from '../support/media-consistency.js';
import { useTestSuite } from '../support/suite.js';

const REUSED = {
  message: 'This Idempotency-Key was already used for a different request.',
  details: null,
};
const INVALID_KEY = {
  message: 'Validation error.',
  details: {
    errors: [
      {
        loc: ['header', 'Idempotency-Key'],
        msg: 'Idempotency-Key must be 8 to 128 letters, digits or . _ : ~ + / = - characters.',
        type: 'value_error',
      },
    ],
  },
};

describe('POST /libraries/ with an Idempotency-Key (issue 14)', () => {
  const clock = new FakeClock();
  const { db, t, alice, bob } = useTestSuite({
    clock,
    env: { RATE_LIMIT_ENABLED: 'false', IDEMPOTENCY_KEY_TTL_HOURS: '24' },
    users: { alice: 'user', bob: 'user' },
  });
  let photo: PhotoPart;

  beforeAll(async () => {
    photo = { data: await jpeg(80, 60) };
  });

  function submit(
    user: RegisteredUser,
    key: string | null,
    fields: FormFields = submissionFields(),
    part: PhotoPart = photo,
  ): Promise<request.Response> {
    let req = request(t.http).post('/api/v1/libraries/');
    if (key !== null) req = req.set('Idempotency-Key', key);
    return multipart(req, fields, part, user.access);
  }

  const rowsNamed = (name: string) =>
    withClient(
      db.url,
      async (client) =>
        (
          await client.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM libraries WHERE name = $1',
            [name],
          )
        ).rows[0].n,
    );
  const keyRows = () =>
    withClient(
      db.url,
      async (client) =>
        (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM idempotency_keys'))
          .rows[0].n,
    );

  it('a retry with the same key and request answers the original 201 and body; nothing is created again', async () => {
    const key = randomUUID();
    const fields = submissionFields({ name: 'Idempotent cabinet' });
    const first = await submit(alice, key, fields);
    expect(first.status).toBe(201);
    const files = await mediaFiles(t);

    // The same form again (its fields in another order: a new multipart body, the same request).
    const reordered = Object.fromEntries(Object.entries(fields).reverse());
    const retry = await submit(alice, key, reordered);
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(await rowsNamed('Idempotent cabinet')).toBe(1);
    // The retry stored no photo of its own.
    expect(await mediaFiles(t)).toEqual(files);
  });

  it('the same key with another request is 409 and writes nothing', async () => {
    const key = randomUUID();
    expect((await submit(alice, key, submissionFields({ name: 'First use' }))).status).toBe(201);
    const files = await mediaFiles(t);
    const keys = await keyRows();

    const otherFields = await submit(alice, key, submissionFields({ name: 'Second use' }));
    expect(otherFields.status).toBe(409);
    expect(otherFields.body).toEqual(REUSED);
    const otherPhoto = await submit(alice, key, submissionFields({ name: 'First use' }), {
      data: await jpeg(81, 60),
    });
    expect(otherPhoto.status).toBe(409);
    expect(otherPhoto.body).toEqual(REUSED);

    expect(await rowsNamed('Second use')).toBe(0);
    expect(await rowsNamed('First use')).toBe(1);
    expect(await keyRows()).toBe(keys);
    expect(await mediaFiles(t)).toEqual(files);
  });

  it('keys belong to their user: another user with the same key creates their own', async () => {
    const key = randomUUID();
    const fields = submissionFields({ name: 'Shared key' });
    const mine = await submit(alice, key, fields);
    const theirs = await submit(bob, key, fields);
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(await rowsNamed('Shared key')).toBe(2);
  });

  it('concurrent retries with one key: all answer the same 201 body, one row, no orphan file after the sweep', async () => {
    const key = randomUUID();
    const fields = submissionFields({ name: 'Raced key' });
    const answers = await Promise.all(Array.from({ length: 5 }, () => submit(alice, key, fields)));
    expect(answers.map((res) => res.status)).toEqual([201, 201, 201, 201, 201]);
    for (const res of answers) expect(res.body).toEqual(answers[0].body);
    expect(await rowsNamed('Raced key')).toBe(1);
    await t.app.get(OrphanMediaSweep).sweep(0);
    expect(await auditMedia(db.url, t)).toEqual({
      missing: [],
      unreferenced: [],
    });
  });

  it.each([
    ['too short', 'abc1234'],
    ['too long', 'k'.repeat(129)],
    ['a space', 'key with space'],
    ['a non-ASCII letter', 'schlüssel-0001'],
    ['two values', 'key-00001, key-00002'],
  ])(
    'a malformed key (%s) is 422 at ["header", "Idempotency-Key"], nothing written',
    async (_, key) => {
      const name = `Malformed ${randomUUID()}`;
      const res = await submit(alice, key, submissionFields({ name }));
      expect(res.status).toBe(422);
      expect(res.body).toEqual(INVALID_KEY);
      expect(await rowsNamed(name)).toBe(0);
    },
  );

  it('without the header nothing changes: the same request twice creates twice', async () => {
    const fields = submissionFields({ name: 'No key' });
    expect((await submit(alice, null, fields)).status).toBe(201);
    expect((await submit(alice, null, fields)).status).toBe(201);
    expect(await rowsNamed('No key')).toBe(2);
  });

  it('community photos: a retry answers the original 201, another caption with the key 409, one row', async () => {
    const { slug } = await insertLibrary(db.url, { status: 'approved' });
    const key = randomUUID();
    const post = (caption: string) =>
      multipart(
        request(t.http).post(`/api/v1/libraries/${slug}/photo`).set('Idempotency-Key', key),
        { caption },
        photo,
        alice.access,
      );
    const answers = await Promise.all([post('Side view'), post('Side view'), post('Side view')]);
    expect(answers.map((res) => res.status)).toEqual([201, 201, 201]);
    for (const res of answers) expect(res.body).toEqual(answers[0].body);
    const other = await post('Front view');
    expect(other.status).toBe(409);
    expect(other.body).toEqual(REUSED);
    const rows = await withClient(
      db.url,
      async (client) =>
        (
          await client.query<{ caption: string }>(
            'SELECT caption FROM library_photos WHERE created_by = $1',
            [alice.id],
          )
        ).rows,
    );
    expect(rows).toEqual([{ caption: 'Side view' }]);
  });

  it('reports (photo optional): a retry answers the original 201, the key on another library 409', async () => {
    const first = await insertLibrary(db.url, { status: 'approved' });
    const second = await insertLibrary(db.url, { status: 'approved' });
    const key = randomUUID();
    const report = (slug: string) =>
      request(t.http)
        .post(`/api/v1/libraries/${slug}/report`)
        .set('Authorization', `Bearer ${bob.access}`)
        .set('Idempotency-Key', key)
        .field('reason', 'other')
        .field('details', 'The door is broken.');
    const original = await report(first.slug);
    expect(original.status).toBe(201);
    const retry = await report(first.slug);
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(original.body);
    const elsewhere = await report(second.slug);
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.body).toEqual(REUSED);
    const count = await withClient(
      db.url,
      async (client) =>
        (
          await client.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM reports WHERE created_by = $1',
            [bob.id],
          )
        ).rows[0].n,
    );
    expect(count).toBe(1);
  });

  it('keys expire after IDEMPOTENCY_KEY_TTL_HOURS: then the key creates anew, and the sweep deletes expired keys', async () => {
    const key = randomUUID();
    const fields = submissionFields({ name: 'Expiring key' });
    const first = await submit(alice, key, fields);
    expect(first.status).toBe(201);

    clock.advance(23 * 3_600_000);
    Object.assign(alice, await loginUser(t.http, alice.username, alice.password));
    const within = await submit(alice, key, fields);
    expect(within.body).toEqual(first.body);
    expect(await rowsNamed('Expiring key')).toBe(1);

    clock.advance(2 * 3_600_000);
    Object.assign(alice, await loginUser(t.http, alice.username, alice.password));
    const after = await submit(alice, key, fields);
    expect(after.status).toBe(201);
    expect(after.body.id).not.toBe(first.body.id);
    expect(await rowsNamed('Expiring key')).toBe(2);

    // Every key but the one just recorded is now older than 24 h.
    const before = await keyRows();
    expect(await t.app.get(IdempotencyService).sweep()).toBe(before - 1);
    expect(await keyRows()).toBe(1);
  });
});
