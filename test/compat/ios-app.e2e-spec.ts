/**
 * The shipped iOS app's requests, replayed exactly as it sends them (headers, body encoding, paths), at the four
 * points where it broke: deleting a social-only account with `{"confirm": true}`, opening its own rejected
 * submission, Kosovo (`XK`) as a country, and revalidating anonymous reads (it ignores `Vary`).
 */
import request from 'supertest';
import { bearer, registerUser } from '../support/auth.js';
import { withClient } from '../support/database.js';
import {
  defaultPhoto,
  insertLibrary,
  NOT_FOUND,
  submissionFields,
  submitLibrary,
} from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

/** What the app sends with every request (URLSession defaults plus its own headers). */
const APP_HEADERS = {
  'User-Agent':
    'BookCorners/2.4.1 (iPhone; iOS 18.1; Scale/3.00) CFNetwork/1568.200.51 Darwin/24.1.0',
  Accept: 'application/json',
  'Accept-Language': 'en-GB;q=1.0, de-DE;q=0.9',
  'Accept-Encoding': 'gzip, deflate, br',
};

describe('iOS app compatibility', () => {
  const app = (test: request.Test, token?: string) => {
    let req = test.set(APP_HEADERS);
    if (token) req = req.set('Authorization', bearer(token));
    return req;
  };

  const { db, t, owner, other } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false' },
    users: { owner: 'user', other: 'user' },
  });

  describe('DELETE /auth/me of a social-only account', () => {
    const socialOnly = async () => {
      const user = await registerUser(t.http);
      await withClient(db.url, (client) =>
        client.query('UPDATE users SET password_hash = NULL WHERE id = $1', [user.id]),
      );
      return user;
    };

    it('accepts the app\'s {"confirm": true} like confirm_text "DELETE"', async () => {
      const user = await socialOnly();
      const res = await app(request(t.http).delete('/api/v1/auth/me'), user.access)
        .set('Content-Type', 'application/json')
        .send('{"confirm":true}')
        .expect(200);
      expect(res.body).toEqual({ message: 'Account deleted successfully.', details: null });
      await app(request(t.http).get('/api/v1/auth/me'), user.access).expect(401);
    });

    it('still refuses a body with neither (400), and confirm: false', async () => {
      const user = await socialOnly();
      for (const body of ['{}', '{"confirm":false}', '{"confirm_text":"delete"}']) {
        const res = await app(request(t.http).delete('/api/v1/auth/me'), user.access)
          .set('Content-Type', 'application/json')
          .send(body)
          .expect(400);
        expect(res.body).toEqual({
          message: "Send confirm_text set to 'DELETE' to delete your account.",
          details: null,
        });
      }
      const wrongType = await app(request(t.http).delete('/api/v1/auth/me'), user.access)
        .set('Content-Type', 'application/json')
        .send('{"confirm":"yes"}')
        .expect(422);
      expect(wrongType.body.details.errors[0].loc).toEqual(['body', 'confirm']);
    });

    it('does not let confirm: true replace the password of an account that has one', async () => {
      const user = await registerUser(t.http);
      await app(request(t.http).delete('/api/v1/auth/me'), user.access)
        .set('Content-Type', 'application/json')
        .send('{"confirm":true}')
        .expect(400);
    });
  });

  describe("GET /libraries/{slug} of the creator's rejected submission", () => {
    it('answers the creator with status and rejection_reason, privately; everyone else 404', async () => {
      const rejected = await insertLibrary(db.url, {
        slug: 'ios-rejected',
        status: 'rejected',
        rejection_reason: 'The photo does not show a bookcase.',
        created_by: owner.id,
      });
      const res = await app(
        request(t.http).get(`/api/v1/libraries/${rejected.slug}`),
        owner.access,
      ).expect(200);
      expect(res.body).toMatchObject({
        slug: 'ios-rejected',
        status: 'rejected',
        rejection_reason: 'The photo does not show a bookcase.',
      });
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.headers.etag).toBeUndefined();
      for (const token of [other.access, undefined]) {
        const refused = await app(
          request(t.http).get(`/api/v1/libraries/${rejected.slug}`),
          token,
        ).expect(404);
        expect(refused.body).toEqual(NOT_FOUND);
      }
    });
  });

  describe('country XK (Kosovo)', () => {
    it('is accepted on submission and edit, named Kosovo with its CLDR flag', async () => {
      const photo = await defaultPhoto();
      const created = await app(request(t.http).post('/api/v1/libraries/'), owner.access)
        .field('name', 'Rafti i librave')
        .field('address', 'Sheshi Skënderbeu 1')
        .field('city', 'Prishtina')
        .field('country', 'XK')
        .field('latitude', '42.6629')
        .field('longitude', '21.1655')
        .attach('photo', photo, { filename: 'IMG_0042.jpg', contentType: 'image/jpeg' })
        .expect(201);
      expect(created.body.country).toBe('XK');
      const edited = await app(
        request(t.http).patch(`/api/v1/libraries/${created.body.slug}`),
        owner.access,
      )
        .field('country', 'xk')
        .expect(200);
      expect(edited.body.country).toBe('XK');

      await insertLibrary(db.url, { slug: 'ios-kosovo', status: 'approved', country: 'XK' });
      const countries = await app(request(t.http).get('/api/v1/libraries/countries/')).expect(200);
      expect(countries.body.items).toContainEqual({
        country_code: 'XK',
        country_name: 'Kosovo',
        flag_emoji: '🇽🇰',
        count: 1,
      });
      const listed = await app(request(t.http).get('/api/v1/libraries/?country=XK')).expect(200);
      expect(listed.body.items.map((item: { slug: string }) => item.slug)).toEqual(['ios-kosovo']);
    });

    it('still refuses a code nobody assigned', async () => {
      const res = await submitLibrary(t.http, owner.access, submissionFields({ country: 'XX' }));
      expect(res.status).toBe(422);
      expect(res.body.details.errors[0].loc).toEqual(['form', 'country']);
    });
  });

  describe('anonymous reads', () => {
    it('are shared-cacheable but revalidated: max-age=0, s-maxage, ETag and 304 on If-None-Match', async () => {
      await insertLibrary(db.url, { slug: 'ios-cached', status: 'approved' });
      for (const path of [
        '/api/v1/libraries/?page=1&page_size=20',
        '/api/v1/libraries/ios-cached',
        '/api/v1/libraries/latest?limit=10',
        '/api/v1/libraries/countries/',
        '/api/v1/statistics/',
      ]) {
        const first = await app(request(t.http).get(path)).expect(200);
        expect([path, first.headers['cache-control']]).toEqual([
          path,
          expect.stringMatching(/^public, max-age=0, s-maxage=\d+$/),
        ]);
        expect(first.headers.vary).toBe('Authorization');
        const etag = first.headers.etag;
        expect([path, etag]).toEqual([path, expect.stringMatching(/^"[\w-]+"$/)]);
        const again = await app(request(t.http).get(path)).set('If-None-Match', etag).expect(304);
        expect(again.text ?? '').toBe('');
        await app(request(t.http).get(path)).set('If-None-Match', '"stale"').expect(200);
      }
    });

    it('with a token stay private, no-store, without an ETag (is_favourited is per user)', async () => {
      const res = await app(
        request(t.http).get('/api/v1/libraries/ios-cached'),
        owner.access,
      ).expect(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.headers.etag).toBeUndefined();
    });
  });
});
