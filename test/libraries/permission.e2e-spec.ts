/**
 * The permission and provenance rules 1–5 of api-spec.md ("Library, internal and permission fields"), one block
 * each. Rule 4's OpenAPI part reads the BUILT app (compiled with the swagger plugin, as production runs it).
 */
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import request from 'supertest';
import { bearer } from '../support/auth.js';
import { TEST_JWT_SECRET } from '../support/app.js';
import { withClient } from '../support/database.js';
import {
  countLibraries,
  createLibrary,
  GIF_1X1,
  ITEM_FIELDS,
  libraryRow,
  multipart,
  submissionFields,
  submitLibrary,
} from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

const PERMISSION = 'mapdb_submission_allowed';

describe('permission and provenance (spec rules 1–5)', () => {
  const { db, t, alice, bob } = useTestSuite({
    env: { RATE_LIMIT_ENABLED: 'false' },
    users: { alice: 'user', bob: 'user' },
  });

  const permissionOf = async (id: number) => {
    const row = await libraryRow(db.url, id);
    return {
      allowed: row?.mapdb_submission_allowed,
      at:
        row?.mapdb_submission_allowed_at === null
          ? null
          : (row?.mapdb_submission_allowed_at as Date).toISOString(),
      origin: row?.submission_origin,
    };
  };

  describe('rule 1: rows start false / null / legacy; nothing is inferred from created_by', () => {
    it('a row inserted without those columns reads false, null, legacy, even with a creator', async () => {
      const id = await withClient(db.url, async (client) => {
        const { rows } = await client.query<{ id: number }>(
          `INSERT INTO libraries (slug, city, country, location, created_by, status)
           VALUES ('legacy-row', 'Trier', 'DE', ST_SetSRID(ST_MakePoint(6.64, 49.75), 4326)::geography, $1, 'approved')
           RETURNING id`,
          [alice.id],
        );
        return rows[0].id;
      });
      expect(await permissionOf(id)).toEqual({ allowed: false, at: null, origin: 'legacy' });
    });

    it('the schema refuses a permission time without the permission, indexes the origin, not the permission', async () => {
      await expect(
        withClient(db.url, (client) =>
          client.query(
            `INSERT INTO libraries (slug, city, country, location, mapdb_submission_allowed, mapdb_submission_allowed_at)
             VALUES ('bad-time', 'Trier', 'DE', ST_SetSRID(ST_MakePoint(6.64, 49.75), 4326)::geography, false, now())`,
          ),
        ),
      ).rejects.toThrow(/libraries_permission_time_check/);
      await expect(
        withClient(db.url, (client) =>
          client.query(
            `INSERT INTO libraries (slug, city, country, location, submission_origin)
             VALUES ('bad-origin', 'Trier', 'DE', ST_SetSRID(ST_MakePoint(6.64, 49.75), 4326)::geography, 'mapdb')`,
          ),
        ),
      ).rejects.toThrow(/libraries_origin_check/);
      const indexes = await withClient(db.url, async (client) =>
        (
          await client.query<{ indexdef: string }>(
            `SELECT indexdef FROM pg_indexes WHERE tablename = 'libraries'`,
          )
        ).rows.map((row) => row.indexdef),
      );
      expect(indexes.filter((definition) => definition.includes(PERMISSION))).toEqual([]);
      expect(indexes.some((definition) => /\(submission_origin\)/.test(definition))).toBe(true);
    });
  });

  describe('rule 2: an authenticated API create sets origin user', () => {
    it('stores submission_origin = user and the submitter as created_by', async () => {
      const created = await createLibrary(t.http, alice.access);
      const row = await libraryRow(db.url, created.id);
      expect([row?.submission_origin, row?.created_by, row?.status]).toEqual([
        'user',
        alice.id,
        'pending',
      ]);
    });

    it('ignores provenance, status and permission-time fields a client sends along', async () => {
      const res = await submitLibrary(
        t.http,
        alice.access,
        submissionFields({
          city: 'Speyer',
          status: 'approved',
          submission_origin: 'staff',
          source: 'mapdb',
          external_id: 'node/42',
          created_by: String(bob.id),
          slug: 'chosen-slug',
          [`${PERMISSION}_at`]: '2020-01-01T00:00:00Z',
        }),
      );
      expect(res.status).toBe(201);
      expect(res.body.slug).not.toBe('chosen-slug');
      expect(res.body.source).toBe('');
      const row = await libraryRow(db.url, res.body.id);
      expect(row).toMatchObject({
        status: 'pending',
        submission_origin: 'user',
        source: '',
        external_id: '',
        created_by: alice.id,
        [PERMISSION]: false,
        [`${PERMISSION}_at`]: null,
      });
    });
  });

  describe('rule 3 (create path): the permission is stored as given, with its time only when true', () => {
    it('omitted and explicit false are false with a null time; true records the clock time', async () => {
      const omitted = await createLibrary(t.http, alice.access);
      const explicitFalse = await createLibrary(t.http, alice.access, { [PERMISSION]: 'false' });
      const explicitTrue = await createLibrary(t.http, alice.access, { [PERMISSION]: 'true' });
      expect([omitted[PERMISSION], explicitFalse[PERMISSION], explicitTrue[PERMISSION]]).toEqual([
        false,
        false,
        true,
      ]);
      expect(await permissionOf(omitted.id)).toEqual({ allowed: false, at: null, origin: 'user' });
      expect(await permissionOf(explicitFalse.id)).toEqual({
        allowed: false,
        at: null,
        origin: 'user',
      });
      expect(await permissionOf(explicitTrue.id)).toEqual({
        allowed: true,
        at: new Date(t.clock.now()).toISOString(),
        origin: 'user',
      });
    });

    it('keeps two submissions of one user independent', async () => {
      const first = await createLibrary(t.http, bob.access, { [PERMISSION]: 'true' });
      t.clock.advance(60_000);
      const second = await createLibrary(t.http, bob.access, { [PERMISSION]: 'false' });
      const third = await createLibrary(t.http, bob.access, { [PERMISSION]: 'true' });
      expect((await permissionOf(first.id)).allowed).toBe(true);
      expect(await permissionOf(second.id)).toEqual({ allowed: false, at: null, origin: 'user' });
      const [firstAt, thirdAt] = [
        (await permissionOf(first.id)).at,
        (await permissionOf(third.id)).at,
      ];
      expect(Date.parse(thirdAt!) - Date.parse(firstAt!)).toBe(60_000);
    });

    it('stores nothing when authentication, validation or the photo fails', async () => {
      const before = await countLibraries(db.url);
      const fields = submissionFields({ [PERMISSION]: 'true' });
      expect((await submitLibrary(t.http, undefined, fields)).status).toBe(401);
      expect(
        (await submitLibrary(t.http, alice.access, { ...fields, latitude: undefined })).status,
      ).toBe(422);
      expect((await submitLibrary(t.http, alice.access, fields, { data: GIF_1X1 })).status).toBe(
        400,
      );
      expect(await countLibraries(db.url)).toBe(before);
    });
  });

  describe('rule 4: the permission appears only in the create response and in /libraries/mine', () => {
    let slug: string;

    beforeAll(async () => {
      const created = await createLibrary(t.http, alice.access, {
        [PERMISSION]: 'true',
        city: 'Mainz',
      });
      expect(created[PERMISSION]).toBe(true);
      slug = created.slug;
      await withClient(db.url, (client) =>
        client.query(`UPDATE libraries SET status = 'approved' WHERE slug = $1`, [slug]),
      );
      await request(t.http)
        .post(`/api/v1/libraries/${slug}/favourite`)
        .set('Authorization', bearer(alice.access))
        .expect(201);
    });

    it.each([
      ['list', '/api/v1/libraries/'],
      ['list (proximity)', '/api/v1/libraries/?lat=50&lng=8.27'],
      ['list (q)', '/api/v1/libraries/?q=bucherschrank'],
      ['latest', '/api/v1/libraries/latest'],
      ['detail', '/api/v1/libraries/{slug}'],
      ['favourites', '/api/v1/libraries/favourites'],
      ['countries', '/api/v1/libraries/countries/'],
      ['statistics', '/api/v1/statistics/'],
      ['my reports', '/api/v1/libraries/mine/reports'],
      ['my photos', '/api/v1/libraries/mine/photos'],
    ])('not in %s, anonymous or as the submitter', async (_label, path) => {
      const url = path.replace('{slug}', slug);
      for (const token of [undefined, alice.access]) {
        if (!token && url.includes('/favourites')) continue;
        if (!token && url.includes('/mine/')) continue;
        const req = request(t.http).get(url);
        const res = await (token ? req.set('Authorization', bearer(token)) : req).expect(200);
        expect(res.text).not.toContain('mapdb');
        if (
          Array.isArray(res.body.items) &&
          !url.includes('/mine/') &&
          !url.includes('countries')
        ) {
          expect((res.body.items as { slug: string }[]).map((item) => item.slug)).toContain(slug);
        }
      }
    });

    it('not in the owner-edit response', async () => {
      const res = await multipart(
        request(t.http).patch(`/api/v1/libraries/${slug}`),
        { brand: 'B' },
        null,
        alice.access,
      ).expect(200);
      expect(res.text).not.toContain('mapdb');
    });

    it('in the create response and in each item of /libraries/mine, the submitter’s own value', async () => {
      const res = await request(t.http)
        .get('/api/v1/libraries/mine?page_size=50')
        .set('Authorization', bearer(alice.access))
        .expect(200);
      const items = res.body.items as Record<string, unknown>[];
      expect(items.length).toBeGreaterThan(1);
      for (const item of items) expect(typeof item[PERMISSION]).toBe('boolean');
      expect(items.find((item) => item.slug === slug)?.[PERMISSION]).toBe(true);
    });

    describe('OpenAPI (built app)', () => {
      let app: INestApplication;
      let document: {
        paths: Record<
          string,
          Record<
            string,
            {
              responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
              requestBody?: { content?: Record<string, { schema?: unknown }> };
            }
          >
        >;
        components: { schemas: Record<string, unknown> };
      };
      const dist = (path: string) => new URL(`../../dist/src/${path}`, import.meta.url).href;

      beforeAll(async () => {
        const { AppModule } = await import(dist('app.module.js'));
        const { configureApp, NEST_APP_OPTIONS } = await import(dist('app.setup.js'));
        const { loadConfig } = await import(dist('config/app-config.js'));
        const config = loadConfig({
          NODE_ENV: 'test',
          DATABASE_URL: db.url,
          JWT_SECRET: TEST_JWT_SECRET,
          LOG_LEVEL: 'silent',
        });
        app = await NestFactory.create(
          AppModule.forRoot({ config, databaseUrl: db.url, runMigrations: false }),
          {
            ...NEST_APP_OPTIONS,
            logger: false,
          },
        );
        await configureApp(app, config);
        document = (await request(app.getHttpServer()).get('/api/v1/openapi.json').expect(200))
          .body;
      });

      afterAll(async () => {
        await app?.close();
      });

      /** Every property name reachable from a schema, following $refs, allOf, items. */
      function propertyNames(schema: unknown, seen = new Set<string>()): Set<string> {
        const names = new Set<string>();
        const visit = (node: unknown) => {
          if (!node || typeof node !== 'object') return;
          const record = node as Record<string, unknown>;
          if (typeof record.$ref === 'string') {
            const name = record.$ref.split('/').pop()!;
            if (seen.has(name)) return;
            seen.add(name);
            visit(document.components.schemas[name]);
            return;
          }
          if (record.properties && typeof record.properties === 'object') {
            for (const [key, value] of Object.entries(record.properties)) {
              names.add(key);
              visit(value);
            }
          }
          for (const key of ['items', 'additionalProperties']) visit(record[key]);
          for (const key of ['allOf', 'oneOf', 'anyOf'])
            (record[key] as unknown[] | undefined)?.forEach(visit);
        };
        visit(schema);
        return names;
      }

      const successSchemas = (path: string, method: string) =>
        Object.entries(document.paths[path]?.[method]?.responses ?? {})
          .filter(([status]) => status.startsWith('2'))
          .flatMap(([, response]) =>
            Object.values(response.content ?? {}).map((content) => content.schema),
          );

      it('documents it in the create response and in /libraries/mine items', () => {
        for (const [path, method] of [
          ['/api/v1/libraries', 'post'],
          ['/api/v1/libraries/mine', 'get'],
        ]) {
          const schemas = successSchemas(path, method);
          expect(schemas.length).toBeGreaterThan(0);
          expect(schemas.some((schema) => propertyNames(schema).has(PERMISSION))).toBe(true);
        }
      });

      it('documents it in no other response outside the staff map-contribution API, nor in the owner-edit form', () => {
        const leaks: string[] = [];
        for (const [path, item] of Object.entries(document.paths)) {
          if (path.startsWith('/api/v1/admin/')) continue;
          for (const method of Object.keys(item)) {
            if (
              (path === '/api/v1/libraries' && method === 'post') ||
              (path === '/api/v1/libraries/mine' && method === 'get')
            )
              continue;
            if (
              successSchemas(path, method).some((schema) => propertyNames(schema).has(PERMISSION))
            ) {
              leaks.push(`${method.toUpperCase()} ${path}`);
            }
          }
        }
        expect(leaks).toEqual([]);
        const patchForm =
          document.paths['/api/v1/libraries/{slug}'].patch.requestBody?.content?.[
            'multipart/form-data'
          ]?.schema;
        expect(propertyNames(patchForm).size).toBeGreaterThan(5);
        expect(propertyNames(patchForm).has(PERMISSION)).toBe(false);
        // Sanity: the public item schemas are documented at all (so the absence above means something).
        expect(propertyNames(successSchemas('/api/v1/libraries/{slug}', 'get')[0])).toEqual(
          // status and rejection_reason: only in the creator's own view of a rejected library.
          new Set([...ITEM_FIELDS, 'photos', 'caption', 'status', 'rejection_reason']),
        );
      });
    });
  });

  describe('rule 5: owner edits can neither enable nor change it', () => {
    it.each([
      ['pending', 'false', 'true'],
      ['approved', 'true', 'false'],
      ['approved', 'false', 'true'],
    ])(
      '%s library holding %s: PATCH with %s → 400, the row unchanged',
      async (status, stored, attempt) => {
        const created = await createLibrary(t.http, alice.access, { [PERMISSION]: stored });
        await withClient(db.url, (client) =>
          client.query('UPDATE libraries SET status = $1 WHERE id = $2', [status, created.id]),
        );
        const before = await libraryRow(db.url, created.id);
        for (const field of [PERMISSION, `${PERMISSION}_at`]) {
          const multipartRes = await multipart(
            request(t.http).patch(`/api/v1/libraries/${created.slug}`),
            { name: 'Edited', [field]: attempt },
            null,
            alice.access,
          );
          expect([multipartRes.status, multipartRes.body]).toEqual([
            400,
            { message: `Unsupported field: ${field}.`, details: null },
          ]);
          const jsonRes = await request(t.http)
            .patch(`/api/v1/libraries/${created.slug}`)
            .set('Authorization', bearer(alice.access))
            .send({ [field]: attempt === 'true' });
          expect([jsonRes.status, jsonRes.body.message]).toEqual([
            400,
            `Unsupported field: ${field}.`,
          ]);
        }
        expect(await libraryRow(db.url, created.id)).toEqual(before);
      },
    );

    it('staged edits of an approved library never hold it', async () => {
      const created = await createLibrary(t.http, alice.access, { [PERMISSION]: 'true' });
      await withClient(db.url, (client) =>
        client.query(`UPDATE libraries SET status = 'approved' WHERE id = $1`, [created.id]),
      );
      const before = await permissionOf(created.id);
      await multipart(
        request(t.http).patch(`/api/v1/libraries/${created.slug}`),
        { name: 'Staged' },
        null,
        alice.access,
      ).expect(200);
      await multipart(
        request(t.http).patch(`/api/v1/libraries/${created.slug}`),
        { capacity: '3' },
        null,
        alice.access,
      ).expect(200);
      const row = await libraryRow(db.url, created.id);
      expect(row?.pending_changes).toEqual({ name: 'Staged', capacity: 3 });
      expect(JSON.stringify(row?.pending_changes)).not.toContain('mapdb');
      expect(await permissionOf(created.id)).toEqual(before);
    });
  });
});
