/**
 * Issue 14, items 4–6: NUL bytes and invalid UTF-8 in paths, query strings, JSON and form fields are refused with
 * the usual 4xx before anything is written; JSON nested deeper than 32 is a 400; requests Node's HTTP parser
 * refuses get the JSON envelope; the Swagger UI page is locked down. One table per route family, API and console.
 */
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { bearer } from '../support/auth.js';
import { countRows } from '../support/community.js';
import { csrfOf, signInConsole, type ConsoleAgent } from '../support/console.js';
import {
  createLibrary,
  defaultPhoto,
  insertLibrary,
  mediaFiles,
  NOT_FOUND,
} from '../support/libraries.js';
import { CANNOT_PARSE } from '../support/errors.js';
import { useTestSuite } from '../support/suite.js';

const BAD_TEXT = {
  msg: 'Must not contain NUL bytes or invalid UTF-8.',
  type: 'invalid_characters',
};

function validationAt(...locs: (string | number)[][]) {
  return {
    message: 'Validation error.',
    details: { errors: locs.map((loc) => ({ loc, ...BAD_TEXT })) },
  };
}

/** A multipart body written byte by byte, so a field can hold bytes that are not UTF-8. */
function rawMultipart(
  fields: Record<string, Buffer | string>,
  photo: Buffer | null,
): { body: Buffer; type: string } {
  const boundary = 'bookcase-boundary-7f3a';
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`),
      Buffer.isBuffer(value) ? value : Buffer.from(value),
      Buffer.from('\r\n'),
    );
  }
  if (photo) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="photo"; filename="p.jpg"\r\n` +
          'Content-Type: image/jpeg\r\n\r\n',
      ),
      photo,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), type: `multipart/form-data; boundary=${boundary}` };
}

const nested = (depth: number) => `{"username":${'['.repeat(depth)}${']'.repeat(depth)}}`;
/** `"ab"` with an invalid UTF-8 byte between a and b. */
const INVALID_UTF8 = Buffer.from([0x61, 0xff, 0x62]);

describe('hostile input (issue 14)', () => {
  let slug: string;
  let ownSlug: string;

  const { db, t, alice, staff } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false' },
    users: { alice: 'user', staff: 'staff' },
  });

  beforeAll(async () => {
    slug = (await insertLibrary(db.url, { status: 'approved' })).slug;
    ownSlug = (await createLibrary(t.http, alice.access)).slug;
  });

  const counts = async () => ({
    users: await countRows(db.url, 'SELECT count(*)::int AS n FROM users'),
    libraries: await countRows(db.url, 'SELECT count(*)::int AS n FROM libraries'),
    photos: await countRows(db.url, 'SELECT count(*)::int AS n FROM library_photos'),
    reports: await countRows(db.url, 'SELECT count(*)::int AS n FROM reports'),
    favourites: await countRows(db.url, 'SELECT count(*)::int AS n FROM favourites'),
    sessions: await countRows(db.url, 'SELECT count(*)::int AS n FROM console_sessions'),
    media: (await mediaFiles(t)).length,
  });

  /** Runs `send`, expects `status` and `body`, and that no table or media file changed. */
  async function expectRefused(
    send: () => request.Test,
    status: number,
    body?: unknown,
  ): Promise<request.Response> {
    const before = await counts();
    const res = await send();
    expect(res.status).toBe(status);
    if (body !== undefined) expect(res.body).toEqual(body);
    expect(await counts()).toEqual(before);
    return res;
  }

  describe('paths: a slug or token with a NUL or non-UTF-8 byte names nothing (404)', () => {
    const api = (method: 'get' | 'post' | 'patch' | 'delete', path: string, token?: () => string) =>
      [method, path, token] as const;
    it.each([
      api('get', '/api/v1/libraries/a%00b'),
      api('get', '/api/v1/libraries/a%ffb'),
      api('get', '/api/v1/libraries/%c3%28'),
      api('post', '/api/v1/libraries/a%00b/favourite', () => alice.access),
      api('delete', '/api/v1/libraries/a%00b/favourite', () => alice.access),
      api('post', '/api/v1/libraries/a%00b/report', () => alice.access),
      api('post', '/api/v1/libraries/a%00b/photo', () => alice.access),
      api('patch', '/api/v1/libraries/a%00b', () => alice.access),
      api('delete', '/api/v1/auth/devices/a%00b', () => alice.access),
      api('get', '/api/v1/libraries/moderation/a%00b', () => staff.access),
      api('patch', '/api/v1/libraries/moderation/a%ffb', () => staff.access),
      api('get', '/api/v1/admin/map-contributions/a%00b', () => staff.access),
    ])('%s %s → 404', async (method, path, token) => {
      await expectRefused(
        () => {
          const req = request(t.http)[method](path);
          return token ? req.set('Authorization', bearer(token())) : req;
        },
        404,
        NOT_FOUND,
      );
    });
  });

  describe('query strings: 422 at the parameter', () => {
    it.each([
      ['/api/v1/libraries/?q=a%00b', 'q'],
      ['/api/v1/libraries/?city=%ff', 'city'],
      ['/api/v1/libraries/?search=ok&country=D%00E', 'country'],
      ['/api/v1/libraries/latest?limit=1%00', 'limit'],
    ])('GET %s → 422 at query.%s', async (path, name) => {
      await expectRefused(() => request(t.http).get(path), 422, validationAt(['query', name]));
    });

    it('an authenticated route refuses it the same way', async () => {
      const res = await request(t.http)
        .get('/api/v1/libraries/mine?page=%00')
        .set('Authorization', bearer(alice.access));
      expect(res.body).toEqual(validationAt(['query', 'page']));
    });
  });

  describe('JSON bodies', () => {
    it('a NUL in a login username or a register email is a 422 at the field', async () => {
      await expectRefused(
        () =>
          request(t.http).post('/api/v1/auth/login').send({ username: 'a\u0000b', password: 'x' }),
        422,
        validationAt(['body', 'username']),
      );
      await expectRefused(
        () =>
          request(t.http).post('/api/v1/auth/register').send({
            username: 'nulmail',
            email: 'a\u0000@example.org',
            password: 'Quiet-Lantern-7319',
          }),
        422,
        validationAt(['body', 'email']),
      );
    });

    it('a NUL in a key is reported at the key', async () => {
      await expectRefused(
        () =>
          request(t.http).post('/api/v1/auth/login').send({ 'user\u0000name': 'x', password: 'y' }),
        422,
        validationAt(['body', 'username']),
      );
    });

    it('invalid UTF-8 in a JSON string is a 422 at the field, not stored with U+FFFD', async () => {
      const body = Buffer.concat([
        Buffer.from('{"username":"reader_utf","email":"'),
        INVALID_UTF8,
        Buffer.from('@example.org","password":"Quiet-Lantern-7319"}'),
      ]);
      await expectRefused(
        () =>
          request(t.http)
            .post('/api/v1/auth/register')
            .set('Content-Type', 'application/json')
            .serialize((raw: Buffer) => raw as unknown as string)
            .send(body),
        422,
        validationAt(['body', 'email']),
      );
    });

    it('a legitimate U+FFFD sent as valid UTF-8 is not refused as bad bytes', async () => {
      const res = await request(t.http)
        .post('/api/v1/auth/login')
        .send({ username: 'a\uFFFDb', password: 'Quiet-Lantern-7319' });
      expect(res.status).toBe(401);
    });

    it.each([
      ['login', '/api/v1/auth/login', 1500],
      ['register', '/api/v1/auth/register', 1500],
      ['register (100k levels)', '/api/v1/auth/register', 100_000],
      ['devices', '/api/v1/auth/devices', 33],
    ])('%s: JSON nested %s deep is 400 Cannot parse request body.', async (_name, path, depth) => {
      const res = await expectRefused(
        () =>
          request(t.http)
            .post(path)
            .set('Authorization', bearer(alice.access))
            .set('Content-Type', 'application/json')
            .send(nested(depth)),
        400,
        CANNOT_PARSE,
      );
      expect(res.headers['content-type']).toMatch(/application\/json/);
    });

    it('32 levels are still parsed (and then validated)', async () => {
      const res = await request(t.http)
        .post('/api/v1/auth/login')
        .set('Content-Type', 'application/json')
        .send(nested(31));
      expect(res.status).toBe(422);
    });

    it('brackets inside strings do not count as nesting', async () => {
      const res = await request(t.http)
        .post('/api/v1/auth/login')
        .send({ username: '['.repeat(100), password: '{'.repeat(100) });
      expect(res.status).toBe(401);
    });
  });

  describe('multipart forms: 422 at form.<field>, no row, no file', () => {
    const submission = { city: 'Freiburg', country: 'DE', latitude: '47.99', longitude: '7.85' };
    const cases: [
      string,
      'post' | 'patch',
      () => string,
      Record<string, Buffer | string>,
      string,
    ][] = [
      [
        'POST /libraries/',
        'post',
        () => '/api/v1/libraries/',
        { ...submission, name: 'a\u0000b' },
        'name',
      ],
      [
        'POST /libraries/',
        'post',
        () => '/api/v1/libraries/',
        { ...submission, city: INVALID_UTF8 },
        'city',
      ],
      [
        'PATCH /libraries/{slug}',
        'patch',
        () => `/api/v1/libraries/${ownSlug}`,
        { description: 'x\u0000' },
        'description',
      ],
      [
        'POST /libraries/{slug}/photo',
        'post',
        () => `/api/v1/libraries/${slug}/photo`,
        { caption: INVALID_UTF8 },
        'caption',
      ],
      [
        'POST /libraries/{slug}/report',
        'post',
        () => `/api/v1/libraries/${slug}/report`,
        { reason: 'other', details: 'n\u0000' },
        'details',
      ],
    ];
    it.each(cases)('%s (%s) with a bad field', async (_name, method, path, fields, field) => {
      const { body, type } = rawMultipart(fields, await defaultPhoto());
      await expectRefused(
        () =>
          request(t.http)
            [method](path())
            .set('Authorization', bearer(alice.access))
            .set('Content-Type', type)
            .send(body),
        422,
        validationAt(['form', field]),
      );
    });
  });

  describe('the staff console', () => {
    let agent: ConsoleAgent;

    beforeAll(async () => {
      ({ agent } = await signInConsole(t.http, staff));
    });

    it.each([
      ['a NUL', 'a%00b'],
      ['invalid UTF-8', 'a%ffb'],
    ])('sign-in with %s in the username: 422 form, no session', async (_name, username) => {
      const anonymous = request.agent(t.http);
      const form = await anonymous.get('/admin/login');
      await expectRefused(
        () =>
          anonymous
            .post('/admin/login')
            .type('form')
            .send(`_csrf=${encodeURIComponent(csrfOf(form.text))}&username=${username}&password=x`),
        422,
      );
    });

    it.each(['/admin/libraries/a%00b', '/admin/contributions/a%ffb'])(
      'GET %s → 404 before routing (the JSON envelope)',
      async (path) => {
        await expectRefused(() => agent.get(path), 404, NOT_FOUND);
      },
    );

    it.each(['/admin/libraries?q=a%00b', '/admin/photos?status=%ff'])(
      'GET %s → 422 as an HTML page, nothing written',
      async (path) => {
        const res = await expectRefused(() => agent.get(path), 422);
        expect(res.headers['content-type']).toMatch(/text\/html/);
      },
    );
  });

  describe('transport', () => {
    let port: number;

    beforeAll(async () => {
      const server = t.app.getHttpServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });

    /** Writes `raw` on a fresh connection and answers everything the server sent until it closed. */
    function rawExchange(raw: string): Promise<string> {
      return new Promise((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        let received = '';
        socket.on('data', (chunk) => (received += chunk.toString('latin1')));
        socket.on('close', () => resolve(received));
        socket.on('error', reject);
        socket.write(raw);
      });
    }

    function envelopeOf(response: string): { status: number; body: unknown; head: string } {
      const [head, body] = response.split('\r\n\r\n');
      return { status: Number(head.split(' ')[1]), body: JSON.parse(body), head };
    }

    it('oversized headers: 431 with the JSON envelope', async () => {
      const answer = envelopeOf(
        await rawExchange(
          `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        ),
      );
      expect(answer.status).toBe(431);
      expect(answer.head).toMatch(/Content-Type: application\/json/);
      expect(answer.body).toEqual({ message: 'Request header fields too large.', details: null });
    });

    it.each([
      ['a header without a colon', 'GET /health HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n'],
      [
        'Content-Length with Transfer-Encoding (smuggling shape)',
        'POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      ],
      ['a NUL in the request line', 'GET /a\u0000b HTTP/1.1\r\nHost: x\r\n\r\n'],
    ])('%s: 400 with the JSON envelope', async (_name, raw) => {
      const answer = envelopeOf(await rawExchange(raw));
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ message: 'Bad request.', details: null });
    });

    it('the Swagger UI page: CSP limited to its own assets, no framing, nosniff', async () => {
      const res = await request(t.http).get('/api/v1/docs').redirects(1);
      expect(res.status).toBe(200);
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toMatch(/script-src[^;]*unsafe/);
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      // No inline script the policy would block: every <script> loads a file.
      expect(res.text).not.toMatch(/<script>(?!\s*<\/script>)/);
      const init = await request(t.http).get('/api/v1/docs/swagger-ui-init.js');
      expect(init.status).toBe(200);
      expect(init.headers['x-frame-options']).toBe('DENY');
    });
  });
});
