import request from 'supertest';
import type { TestApp } from '../support/app.js';
import { ProbeModule } from '../support/probe.module.js';
import { useTestSuite } from '../support/suite.js';

describe('error envelope and validation (decisions §1)', () => {
  let t: TestApp;

  useTestSuite(
    {
      imports: [ProbeModule],
      env: { RATE_LIMIT_ENABLED: 'false' },
    },
    (s) => ({ t } = s),
  );

  it('answers an unknown route with 404 Not found.', async () => {
    const res = await request(t.http).get('/api/v1/no-such-thing').expect(404);
    expect(res.body).toEqual({ message: 'Not found.', details: null });
    expect(res.headers['content-type']).toMatch(/application\/json/);
  });

  it('answers an unknown method on a known path with the 404 envelope', async () => {
    const res = await request(t.http).delete('/api/v1/probe/items').expect(404);
    expect(res.body).toEqual({ message: 'Not found.', details: null });
  });

  it('answers malformed JSON with 400 Cannot parse request body.', async () => {
    const res = await request(t.http)
      .post('/api/v1/probe/echo')
      .set('Content-Type', 'application/json')
      .send('{"name": ')
      .expect(400);
    expect(res.body).toEqual({ message: 'Cannot parse request body.', details: null });
  });

  it('reports body validation errors as 422 with loc under body, nested fields included', async () => {
    const res = await request(t.http)
      .post('/api/v1/probe/echo')
      .send({ name: 'far too long', child: { code: 'ABCDE' } })
      .expect(422);
    expect(res.body.message).toBe('Validation error.');
    const locs = res.body.details.errors.map((error: { loc: unknown[] }) => error.loc);
    expect(locs).toEqual(
      expect.arrayContaining([
        ['body', 'name'],
        ['body', 'child', 'code'],
      ]),
    );
    for (const error of res.body.details.errors) {
      expect(typeof error.msg).toBe('string');
      expect(typeof error.type).toBe('string');
    }
  });

  it('reports a missing body field', async () => {
    const res = await request(t.http).post('/api/v1/probe/echo').send({}).expect(422);
    expect(res.body.details.errors[0].loc).toEqual(['body', 'name']);
  });

  it('ignores unknown JSON keys', async () => {
    const res = await request(t.http)
      .post('/api/v1/probe/echo')
      .send({ name: 'ok', extra: 'dropped' })
      .expect(201);
    expect(res.body).toEqual({ name: 'ok' });
  });

  it('reports query validation errors under query', async () => {
    const res = await request(t.http).get('/api/v1/probe/items?page_size=51&level=abc').expect(422);
    const locs = res.body.details.errors.map((error: { loc: unknown[] }) => error.loc);
    expect(locs).toEqual(
      expect.arrayContaining([
        ['query', 'page_size'],
        ['query', 'level'],
      ]),
    );
  });

  it('reports path validation errors under path', async () => {
    const res = await request(t.http).get('/api/v1/probe/things/zero').expect(422);
    expect(res.body.details.errors[0].loc).toEqual(['path', 'id']);
  });

  it('hides unexpected errors behind a generic 500', async () => {
    const res = await request(t.http).get('/api/v1/probe/boom').expect(500);
    expect(res.body).toEqual({ message: 'Internal server error.', details: null });
    expect(JSON.stringify(res.body)).not.toContain('hunter2');
  });

  it('maps a unique violation to 409 without SQL text', async () => {
    const res = await request(t.http).post('/api/v1/probe/duplicate').expect(409);
    expect(res.body).toEqual({
      message: 'The request conflicts with existing data.',
      details: null,
    });
  });

  it('never shows driver text for other database errors', async () => {
    const res = await request(t.http).get('/api/v1/probe/bad-sql').expect(500);
    expect(res.body).toEqual({ message: 'Internal server error.', details: null });
  });

  it('accepts both the trailing-slash and the bare form of a path, without redirecting', async () => {
    await request(t.http).get('/api/v1/probe/items').expect(200);
    await request(t.http).get('/api/v1/probe/items/').expect(200);
  });

  it('sets a request id and honours a well-formed incoming one', async () => {
    const generated = await request(t.http).get('/api/v1/probe/items').expect(200);
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await request(t.http)
      .get('/api/v1/probe/items')
      .set('X-Request-Id', 'abc-123')
      .expect(200);
    expect(echoed.headers['x-request-id']).toBe('abc-123');
    const replaced = await request(t.http)
      .get('/api/v1/probe/items')
      .set('X-Request-Id', 'bad id <script>')
      .expect(200);
    expect(replaced.headers['x-request-id']).not.toBe('bad id <script>');
  });
});

describe('pagination', () => {
  let t: TestApp;

  useTestSuite(
    {
      imports: [ProbeModule],
      env: { RATE_LIMIT_ENABLED: 'false' },
    },
    (s) => ({ t } = s),
  );

  it('defaults to page 1 of 20', async () => {
    const res = await request(t.http).get('/api/v1/probe/items').expect(200);
    expect(res.body.items).toHaveLength(20);
    expect(res.body.pagination).toEqual({
      page: 1,
      page_size: 20,
      total: 45,
      total_pages: 3,
      has_next: true,
      has_previous: false,
    });
  });

  it('returns the last page for a page past the end', async () => {
    const res = await request(t.http).get('/api/v1/probe/items?page=99&page_size=20').expect(200);
    expect(res.body.items).toEqual([41, 42, 43, 44, 45]);
    expect(res.body.pagination).toMatchObject({ page: 3, has_next: false, has_previous: true });
  });

  it.each([['page=0'], ['page_size=0'], ['page_size=51'], ['page=1.5'], ['page_size=abc']])(
    'rejects %s with 422',
    async (query) => {
      const res = await request(t.http).get(`/api/v1/probe/items?${query}`).expect(422);
      expect(res.body.details.errors[0].loc[0]).toBe('query');
    },
  );

  it('accepts page_size 1 and 50', async () => {
    expect(
      (await request(t.http).get('/api/v1/probe/items?page_size=1&page=2').expect(200)).body.items,
    ).toEqual([2]);
    expect(
      (await request(t.http).get('/api/v1/probe/items?page_size=50').expect(200)).body.items,
    ).toHaveLength(45);
  });
});
