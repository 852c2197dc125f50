/**
 * AI enrichment against a loopback fake of an OpenAI-compatible chat API, on a real database. The worker's polling
 * is switched off (except in the bootstrap test) and driven with runOnce(); time moves with the FakeClock. The
 * library rows and photos are written directly (through MediaStorage), as the create flow would leave them. Each
 * test starts the apps it needs (closed after it) and finds the fake AI reset.
 */
import pg from 'pg';
import sharp from 'sharp';
import { Database } from '../../src/database/database.js';
import { MediaStorage } from '../../src/common/media/media-storage.js';
import { EnrichmentQueue } from '../../src/enrichment/enrichment.queue.js';
import { EnrichmentWorker } from '../../src/enrichment/enrichment.worker.js';
import {
  DEFAULT_ENRICHMENT_OPTIONS,
  ENRICHMENT_OPTIONS,
  type EnrichmentOptions,
} from '../../src/enrichment/enrichment.options.js';
import { itWithDatabaseServer, type TestApp } from '../support/app.js';
import { FakeClock } from '../support/clock.js';
import { queryRows } from '../support/database.js';
import { aiJson, FakeAiServer } from '../support/fake-ai.js';
import { temporaryDirectory, useTestSuite } from '../support/suite.js';

const API_KEY = 'test-key';
const SECOND = 1000;

/** The app with the enrichment pieces a test drives or writes through. */
interface EnrichmentApp extends TestApp {
  worker: EnrichmentWorker;
  queue: EnrichmentQueue;
  media: MediaStorage;
  database: Database;
}

describe('AI enrichment', () => {
  // Media lives in one folder for the whole file, so a "restarted" app reads the photos the first one stored.
  const {
    db,
    fakes: { ai: fake },
    startApp: startSuiteApp,
  } = useTestSuite({
    app: false,
    fakes: async () => ({
      ai: await FakeAiServer.start(),
      media: temporaryDirectory('bookcase-enrichment-media-'),
    }),
    env: ({ ai, media }) => ({
      MEDIA_ROOT: media.path,
      AI_API_BASE_URL: ai.baseUrl,
      AI_API_KEY: API_KEY,
      AI_MODEL: 'test-model',
    }),
  });
  let clock: FakeClock;
  let open: TestApp[] = [];
  let photo: Buffer;

  /**
   * The real application, plus an override of the worker's tuning (no background polling, a short request timeout
   * where a test needs one); without the AI settings when `ai` is false.
   */
  async function startApp(
    options: { ai?: boolean; clock?: FakeClock; tuning?: Partial<EnrichmentOptions> } = {},
  ): Promise<EnrichmentApp> {
    const t = await startSuiteApp({
      env: options.ai === false ? ({ MEDIA_ROOT }) => ({ MEDIA_ROOT }) : undefined,
      clock: options.clock ?? clock,
      overrides: [
        {
          provide: ENRICHMENT_OPTIONS,
          useValue: { ...DEFAULT_ENRICHMENT_OPTIONS, autoStart: false, ...options.tuning },
        },
      ],
    });
    open.push(t);
    return Object.assign(t, {
      worker: t.app.get(EnrichmentWorker),
      queue: t.app.get(EnrichmentQueue),
      media: t.app.get(MediaStorage),
      database: t.app.get(Database),
    });
  }

  let sequence = 0;
  /** A submitted library with its photo stored, and an enrichment job queued in the same transaction. */
  async function submitLibrary(
    t: EnrichmentApp,
    fields: { name?: string; description?: string } = {},
  ): Promise<{ id: number; address: string }> {
    sequence += 1;
    const key = `libraries/te/enrichment-${sequence}.jpg`;
    await t.media.put(key, photo, 'image/jpeg');
    const address = `Lindenweg ${sequence}`;
    const id = await t.database.transaction(async (tx) => {
      const rows = await tx.query<{ id: number }[]>(
        `INSERT INTO libraries (slug, name, description, address, city, country, postal_code, location, photo_key,
                                thumbnail_key, status, submission_origin)
         VALUES ($1, $2, $3, $4, 'Freiburg im Breisgau', 'DE', '79098',
                 ST_SetSRID(ST_MakePoint(7.85, 47.99), 4326)::geography, $5, $5, 'pending', 'user')
         RETURNING id`,
        [
          `freiburg-lindenweg-${sequence}`,
          fields.name ?? '',
          fields.description ?? '',
          address,
          key,
        ],
      );
      const libraryId = rows[0].id;
      await t.queue.enqueue(tx, libraryId);
      return libraryId;
    });
    return { id, address };
  }

  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    queryRows<T>(db.url, text, params);

  const library = async (id: number) =>
    (
      await sql<{ name: string; description: string; ai_generated_fields: string[] }>(
        'SELECT name, description, ai_generated_fields FROM libraries WHERE id = $1',
        [id],
      )
    )[0];

  const job = (libraryId: number) =>
    sql<{
      status: string;
      attempts: number;
      run_after: Date;
      locked_until: Date | null;
      last_error: string;
    }>(
      'SELECT status, attempts, run_after, locked_until, last_error FROM enrichment_jobs WHERE library_id = $1',
      [libraryId],
    );

  beforeAll(async () => {
    photo = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#a33' } })
      .jpeg()
      .toBuffer();
  });

  beforeEach(async () => {
    clock = new FakeClock();
    await sql('DELETE FROM enrichment_jobs');
  });

  afterEach(async () => {
    for (const t of open.reverse()) await t.close();
    open = [];
    fake.reset();
  });

  it('fills only the blank field from one chat-completions call and marks it AI-generated', async () => {
    const t = await startApp();
    const { id, address } = await submitLibrary(t, { name: 'Bücherschrank am Lindenweg' });
    fake.reply(aiJson('Roter Bücherschrank', 'A red wooden cabinet with two shelves of books.'));

    expect(await t.worker.runOnce()).toBe(1);

    expect(await library(id)).toEqual({
      name: 'Bücherschrank am Lindenweg',
      description: 'A red wooden cabinet with two shelves of books.',
      ai_generated_fields: ['description'],
    });
    expect(await job(id)).toEqual([
      expect.objectContaining({ status: 'done', attempts: 1, last_error: '' }),
    ]);

    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/v1/chat/completions');
    expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
    const body = request.body as {
      model: string;
      messages: {
        role: string;
        content: string | { type: string; text?: string; image_url?: { url: string } }[];
      }[];
    };
    expect(body.model).toBe('test-model');
    expect(body.messages.map((message) => message.role)).toEqual(['system', 'user']);
    expect(body.messages[0].content).toMatch(/JSON/);
    const parts = body.messages[1].content as {
      type: string;
      text?: string;
      image_url?: { url: string };
    }[];
    const text = parts.find((part) => part.type === 'text')?.text ?? '';
    expect(text).toContain(address);
    expect(text).toContain('Freiburg im Breisgau');
    expect(text).toContain('79098');
    expect(text).toContain('DE');
    const image = parts.find((part) => part.type === 'image_url')?.image_url?.url ?? '';
    expect(image.startsWith('data:image/jpeg;base64,')).toBe(true);
    expect(Buffer.from(image.slice('data:image/jpeg;base64,'.length), 'base64').equals(photo)).toBe(
      true,
    );
  });

  it('fills both fields when both are blank', async () => {
    const t = await startApp();
    const { id } = await submitLibrary(t);
    fake.reply({
      content:
        '```json\n{"name": "Telefonzelle Lindenweg", "description": "An old phone box turned bookcase."}\n```',
    });

    await t.worker.runOnce();

    expect(await library(id)).toEqual({
      name: 'Telefonzelle Lindenweg',
      description: 'An old phone box turned bookcase.',
      ai_generated_fields: ['name', 'description'],
    });
  });

  it('never overwrites a field a human filled while the AI was answering', async () => {
    const t = await startApp();
    const { id } = await submitLibrary(t);
    fake.reply({ hold: true, then: aiJson('AI name', 'AI description of the bookcase.') });

    const run = t.worker.runOnce();
    await fake.waitForRequests(1);
    await sql("UPDATE libraries SET name = 'Named by its owner' WHERE id = $1", [id]);
    fake.release();
    await run;

    expect(await library(id)).toEqual({
      name: 'Named by its owner',
      description: 'AI description of the bookcase.',
      ai_generated_fields: ['description'],
    });
  });

  it('does not call the AI when nothing is blank any more', async () => {
    const t = await startApp();
    const { id } = await submitLibrary(t);
    await sql("UPDATE libraries SET name = 'Filled', description = 'Filled too.' WHERE id = $1", [
      id,
    ]);

    expect(await t.worker.runOnce()).toBe(1);

    expect(fake.requests).toHaveLength(0);
    expect(await job(id)).toEqual([expect.objectContaining({ status: 'done' })]);
    expect(await library(id)).toMatchObject({ ai_generated_fields: [] });
  });

  it('counts a garbage reply as a failed attempt that fills nothing, and retries after the backoff', async () => {
    const t = await startApp();
    const { id } = await submitLibrary(t);
    fake.reply({ content: 'What a charming little bookcase! I would call it "Book Nook".' });

    await t.worker.runOnce();

    expect(await library(id)).toEqual({ name: '', description: '', ai_generated_fields: [] });
    const [failed] = await job(id);
    expect(failed).toMatchObject({
      status: 'queued',
      attempts: 1,
      last_error: 'invalid_reply:not_json',
    });
    expect(failed.locked_until).toBeNull();
    expect(failed.run_after.getTime()).toBe(clock.now() + 30 * SECOND);

    clock.advance(29 * SECOND);
    expect(await t.worker.runOnce()).toBe(0);
    expect(fake.requests).toHaveLength(1);

    fake.reply(aiJson('Book Nook', 'A small wooden bookcase on a post.'));
    clock.advance(1 * SECOND);
    expect(await t.worker.runOnce()).toBe(1);
    expect(fake.requests).toHaveLength(2);
    expect(await library(id)).toMatchObject({
      name: 'Book Nook',
      ai_generated_fields: ['name', 'description'],
    });
    expect(await job(id)).toEqual([
      expect.objectContaining({ status: 'done', attempts: 2, last_error: '' }),
    ]);
  });

  it.each([
    [
      'extra keys',
      JSON.stringify({ name: 'N', description: 'D.', alt: 'x' }),
      'invalid_reply:unexpected_keys',
    ],
    ['an empty name', JSON.stringify({ name: '', description: 'D.' }), 'invalid_reply:empty_value'],
    [
      'a number as name',
      JSON.stringify({ name: 7, description: 'D.' }),
      'invalid_reply:wrong_type',
    ],
    [
      'an overly long name',
      JSON.stringify({ name: 'x'.repeat(256), description: 'D.' }),
      'invalid_reply:too_long',
    ],
  ])('refuses a reply with %s as a whole', async (_label, content, category) => {
    const t = await startApp();
    const { id } = await submitLibrary(t);
    fake.reply({ content });

    await t.worker.runOnce();

    expect(await library(id)).toEqual({ name: '', description: '', ai_generated_fields: [] });
    expect(await job(id)).toEqual([expect.objectContaining({ attempts: 1, last_error: category })]);
  });

  it('times out an AI that never answers and counts the attempt', async () => {
    const t = await startApp({ tuning: { requestTimeoutMs: 300 } });
    const { id } = await submitLibrary(t);
    fake.reply({ hang: true });

    expect(await t.worker.runOnce()).toBe(1);

    expect(fake.requests).toHaveLength(1);
    expect(await job(id)).toEqual([
      expect.objectContaining({
        status: 'queued',
        attempts: 1,
        last_error: 'timeout',
        locked_until: null,
      }),
    ]);
    expect(await library(id)).toMatchObject({ name: '', description: '' });
  }, 10_000);

  it('gives up after 3 failed attempts (30 s and 2 min apart) without a 4th request or leaking the key', async () => {
    const t = await startApp();
    const { id } = await submitLibrary(t);
    fake.reply(
      { status: 401, raw: `{"error":{"message":"Incorrect API key provided: ${API_KEY}"}}` },
      { content: `I cannot help with that. (key ${API_KEY})` },
    );
    fake.otherwise({ status: 503, raw: `upstream overloaded for ${API_KEY}` });

    await t.worker.runOnce();
    expect(await job(id)).toEqual([
      expect.objectContaining({ status: 'queued', attempts: 1, last_error: 'http_401' }),
    ]);

    clock.advance(30 * SECOND);
    await t.worker.runOnce();
    const [second] = await job(id);
    expect(second).toMatchObject({
      status: 'queued',
      attempts: 2,
      last_error: 'invalid_reply:not_json',
    });
    expect(second.run_after.getTime()).toBe(clock.now() + 120 * SECOND);

    clock.advance(119 * SECOND);
    expect(await t.worker.runOnce()).toBe(0);
    clock.advance(1 * SECOND);
    await t.worker.runOnce();
    const [third] = await job(id);
    expect(third).toMatchObject({
      status: 'failed',
      attempts: 3,
      last_error: 'http_503',
      locked_until: null,
    });

    clock.advance(24 * 3600 * SECOND);
    expect(await t.worker.runOnce()).toBe(0);
    expect(fake.requests).toHaveLength(3);
    expect(await library(id)).toEqual({ name: '', description: '', ai_generated_fields: [] });
    const errors = await sql('SELECT last_error FROM enrichment_jobs');
    expect(JSON.stringify(errors)).not.toContain(API_KEY);
  });

  it('survives a restart in the middle of a job: the next app takes it up once the lease expires', async () => {
    const first = await startApp();
    const { id } = await submitLibrary(first);
    fake.reply({ hang: true });

    const interrupted = first.worker.runOnce();
    await fake.waitForRequests(1);
    await first.close();
    await interrupted;

    const [leased] = await job(id);
    expect(leased).toMatchObject({ status: 'running', attempts: 1 });
    expect(leased.locked_until!.getTime()).toBeGreaterThan(clock.now());

    const second = await startApp();
    expect(await second.worker.runOnce()).toBe(0);
    expect(fake.requests).toHaveLength(1);

    fake.reply(aiJson('Bücherbox Lindenweg', 'A weatherproof box with children’s books.'));
    clock.set(leased.locked_until!.getTime());
    expect(await second.worker.runOnce()).toBe(1);

    expect(fake.requests).toHaveLength(2);
    expect(await library(id)).toMatchObject({ name: 'Bücherbox Lindenweg' });
    expect(await job(id)).toEqual([expect.objectContaining({ status: 'done', attempts: 2 })]);
  });

  it('gives up a job whose last attempt was interrupted, without another request', async () => {
    const t = await startApp();
    const { id } = await submitLibrary(t);
    const leaseEnd = new Date(clock.now() + 60 * SECOND);
    await sql(
      "UPDATE enrichment_jobs SET status = 'running', attempts = 3, locked_until = $2 WHERE library_id = $1",
      [id, leaseEnd],
    );

    clock.set(leaseEnd.getTime());
    expect(await t.worker.runOnce()).toBe(0);

    expect(fake.requests).toHaveLength(0);
    expect(await job(id)).toEqual([
      expect.objectContaining({ status: 'failed', last_error: 'interrupted' }),
    ]);
  });

  it('does nothing when AI is not configured', async () => {
    const t = await startApp({ ai: false });
    const { id } = await submitLibrary(t);

    expect(await job(id)).toEqual([]);
    expect(await t.worker.runOnce()).toBe(0);
    expect(fake.requests).toHaveLength(0);
  });

  it('never lets two workers on one database process the same job', async () => {
    const shared = new FakeClock();
    const a = await startApp({ clock: shared });
    const b = await startApp({ clock: shared });
    const submitted = [];
    for (let i = 0; i < 6; i += 1) submitted.push(await submitLibrary(a));
    fake.otherwise({ hold: true, then: aiJson('Shared name', 'Described once.') });

    const runs = Promise.all([a.worker.runOnce(), b.worker.runOnce()]);
    await fake.waitForRequests(2);
    // Both workers are inside a call at the same time, each on its own job.
    const texts = () =>
      fake.requests.map((request) => {
        const parts = (
          request.body as { messages: { content: { type: string; text?: string }[] }[] }
        ).messages[1].content;
        return parts.find((part) => part.type === 'text')!.text!;
      });
    expect(new Set(texts()).size).toBe(2);
    fake.otherwise(aiJson('Shared name', 'Described once.'));
    fake.release();
    const [countA, countB] = await runs;

    expect(countA + countB).toBe(6);
    expect(countA).toBeGreaterThan(0);
    expect(countB).toBeGreaterThan(0);
    expect(fake.requests).toHaveLength(6);
    const addresses = texts().map((text) => /Address: (.*)/.exec(text)![1]);
    expect(new Set(addresses)).toEqual(new Set(submitted.map((s) => s.address)));
    const jobs = await sql('SELECT status, attempts FROM enrichment_jobs');
    expect(jobs).toEqual(Array(6).fill({ status: 'done', attempts: 1 }));
  });

  itWithDatabaseServer(
    'skips a job whose row another worker has locked instead of waiting for it',
    async () => {
      const t = await startApp();
      const busy = await submitLibrary(t);
      const free = await submitLibrary(t);
      fake.otherwise(aiJson('Name', 'Description.'));

      const otherWorker = new pg.Client({ connectionString: db.url });
      await otherWorker.connect();
      try {
        await otherWorker.query('BEGIN');
        await otherWorker.query('SELECT id FROM enrichment_jobs WHERE library_id = $1 FOR UPDATE', [
          busy.id,
        ]);

        // Waiting on the locked row instead of skipping it would leave the fake without a request.
        const run = t.worker.runOnce();
        await fake.waitForRequests(1, 3000);
        expect(await run).toBe(1);
        expect(fake.requests).toHaveLength(1);
        expect(JSON.stringify(fake.requests[0].body)).toContain(`Address: ${free.address}\\n`);
        expect(await job(busy.id)).toEqual([
          expect.objectContaining({ status: 'queued', attempts: 0 }),
        ]);
      } finally {
        await otherWorker.query('ROLLBACK');
        await otherWorker.end();
      }

      expect(await t.worker.runOnce()).toBe(1);
      expect(await job(busy.id)).toEqual([
        expect.objectContaining({ status: 'done', attempts: 1 }),
      ]);
    },
    10_000,
  );

  it('polls on its own once the application has started', async () => {
    const t = await startApp({ tuning: { autoStart: true, pollIntervalMs: 50 } });
    await submitLibrary(t);
    fake.otherwise({ hang: true });

    await fake.waitForRequests(1);
    expect(fake.requests[0].path).toBe('/v1/chat/completions');
  });
});
