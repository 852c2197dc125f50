import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import sharp from 'sharp';
import type { TestApp } from '../support/app.js';
import { queryRows, withClient } from '../support/database.js';
import { useCliSuite } from './cli-support.js';

const DAY = 24 * 3600 * 1000;

describe('seed (npm run cli -- seed --libraries N)', () => {
  const cli = useCliSuite('seed', { media: true });
  const { db } = cli;

  const query = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    queryRows<T>(db.url, text, params);

  describe('2,000 libraries', () => {
    let app: TestApp;

    beforeAll(async () => {
      const result = await cli.run(['seed', '--libraries', '2000']);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout.trim()).toMatch(/^Seeded 2000 libraries in \d+\.\d s$/);
      app = await cli.startApp();
    });

    afterAll(async () => {
      await app?.close();
    });

    it('writes exactly that many rows with unique slugs', async () => {
      const [row] = await query<{ n: number; slugs: number }>(
        'SELECT count(*)::int AS n, count(DISTINCT slug)::int AS slugs FROM libraries',
      );
      expect(row).toEqual({ n: 2000, slugs: 2000 });
    });

    it('spreads them over many real cities and countries, within ~15 km of each centre', async () => {
      const [spread] = await query<{ cities: number; countries: number }>(
        'SELECT count(DISTINCT city)::int AS cities, count(DISTINCT country)::int AS countries FROM libraries',
      );
      expect(spread.cities).toBeGreaterThanOrEqual(40);
      expect(spread.countries).toBeGreaterThanOrEqual(15);

      const berlin = await query<{ n: number; farthest_km: number }>(
        `SELECT count(*)::int AS n,
                max(ST_Distance(location, ST_SetSRID(ST_MakePoint(13.405, 52.52), 4326)::geography)) / 1000 AS farthest_km
           FROM libraries WHERE city = 'Berlin'`,
      );
      expect(berlin[0].n).toBeGreaterThan(20);
      expect(berlin[0].farthest_km).toBeLessThanOrEqual(15.1);
      expect(berlin[0].farthest_km).toBeGreaterThan(5);
    });

    it('mixes ~90 % approved with pending, origins import and legacy, never a permission', async () => {
      const statuses = await query<{ status: string; n: number }>(
        'SELECT status, count(*)::int AS n FROM libraries GROUP BY status ORDER BY status',
      );
      const byStatus = Object.fromEntries(statuses.map((row) => [row.status, row.n]));
      expect(Object.keys(byStatus).sort()).toEqual(['approved', 'pending']);
      expect(byStatus.approved / 2000).toBeGreaterThan(0.85);
      expect(byStatus.approved / 2000).toBeLessThan(0.95);

      const origins = await query<{ submission_origin: string }>(
        'SELECT DISTINCT submission_origin FROM libraries ORDER BY 1',
      );
      expect(origins.map((row) => row.submission_origin)).toEqual(['import', 'legacy']);

      const [permission] = await query<{ allowed: number; creators: number }>(
        `SELECT count(*) FILTER (WHERE mapdb_submission_allowed OR mapdb_submission_allowed_at IS NOT NULL)::int AS allowed,
                count(created_by)::int AS creators
           FROM libraries`,
      );
      expect(permission).toEqual({ allowed: 0, creators: 0 });
    });

    it('spreads created_at over the last three years', async () => {
      const [range] = await query<{ oldest: Date; newest: Date }>(
        'SELECT min(created_at) AS oldest, max(created_at) AS newest FROM libraries',
      );
      const now = Date.now();
      expect(range.newest.getTime()).toBeLessThanOrEqual(now);
      expect(range.oldest.getTime()).toBeGreaterThan(now - 3 * 366 * DAY);
      expect(range.oldest.getTime()).toBeLessThan(now - 2 * 365 * DAY);
      expect(range.newest.getTime()).toBeGreaterThan(now - 30 * DAY);
    });

    it('has names and descriptions a common-word full-text query (q) finds', async () => {
      const english = await request(app.http)
        .get('/api/v1/libraries/')
        .query({ q: 'books', page_size: 50 })
        .expect(200);
      expect(english.body.pagination.total).toBeGreaterThan(100);
      expect(english.body.items[0].description.toLowerCase()).toContain('book');

      const german = await request(app.http)
        .get('/api/v1/libraries/')
        .query({ q: 'Bücher' })
        .expect(200);
      expect(german.body.pagination.total).toBeGreaterThan(100);

      const substring = await request(app.http)
        .get('/api/v1/libraries/')
        .query({ search: 'schrank' })
        .expect(200);
      expect(substring.body.pagination.total).toBeGreaterThan(50);
    });

    it('answers a proximity query around a seeded city, nearest first', async () => {
      const near = await request(app.http)
        .get('/api/v1/libraries/')
        .query({ lat: 52.52, lng: 13.405, radius_km: 5, page_size: 50 })
        .expect(200);
      expect(near.body.pagination.total).toBeGreaterThan(5);
      const cities = new Set(near.body.items.map((item: { city: string }) => item.city));
      expect([...cities]).toEqual(['Berlin']);
      const distances = near.body.items.map((item: { lat: number; lng: number }) =>
        Math.hypot(item.lat - 52.52, (item.lng - 13.405) * Math.cos((52.52 * Math.PI) / 180)),
      );
      expect(distances).toEqual([...distances].sort((a, b) => a - b));
    });
  });

  it('keeps slugs unique when run again on the same data, and refreshes planner statistics', async () => {
    const before = (await query<{ n: number }>('SELECT count(*)::int AS n FROM libraries'))[0].n;
    const result = await cli.run(['seed', '--libraries', '500', '--pending-share', '0']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Seeded 500 libraries/);

    const [row] = await query<{ n: number; slugs: number; suffixed: number }>(
      "SELECT count(*)::int AS n, count(DISTINCT slug)::int AS slugs, count(*) FILTER (WHERE slug ~ '-[0-9]+$')::int AS suffixed FROM libraries",
    );
    expect(row.n).toBe(before + 500);
    expect(row.slugs).toBe(row.n);
    // The same random seed produced the same 500 first rows, so each needed a `-2`-style suffix.
    expect(row.suffixed).toBeGreaterThanOrEqual(500);
    const [stats] = await query<{ analyzed: Date | null }>(
      "SELECT last_analyze AS analyzed FROM pg_stat_user_tables WHERE relname = 'libraries'",
    );
    expect(stats.analyzed).not.toBeNull();
  });

  it('--with-photos stores a few JPEGs through media storage and shares them between rows', async () => {
    await withClient(db.url, (client) => client.query('DELETE FROM libraries'));
    const result = await cli.run(['seed', '--libraries', '200', '--with-photos']);
    expect(result.code).toBe(0);

    const keys = await query<{ photo_key: string; thumbnail_key: string; n: number }>(
      'SELECT photo_key, thumbnail_key, count(*)::int AS n FROM libraries WHERE photo_key IS NOT NULL GROUP BY 1, 2',
    );
    expect(keys.length).toBeGreaterThan(1);
    expect(keys.length).toBeLessThanOrEqual(10);
    expect(keys.reduce((sum, key) => sum + key.n, 0)).toBeGreaterThan(100);
    for (const key of keys) {
      const main = await sharp(readFileSync(join(cli.dir, 'media', key.photo_key))).metadata();
      const thumbnail = await sharp(
        readFileSync(join(cli.dir, 'media', key.thumbnail_key)),
      ).metadata();
      expect(main.format).toBe('jpeg');
      expect(thumbnail).toMatchObject({ format: 'jpeg', width: 400 });
    }
  });

  it('refuses a missing or impossible --libraries and a --pending-share outside 0–1', async () => {
    for (const args of [
      ['seed'],
      ['seed', '--libraries', '0'],
      ['seed', '--libraries', '12.5'],
      ['seed', '--libraries', '5', '--pending-share', '2'],
    ]) {
      const result = await cli.run(args);
      expect(result.code).toBe(64);
      expect(result.stderr).toMatch(/--libraries|--pending-share/);
    }
  });
});
