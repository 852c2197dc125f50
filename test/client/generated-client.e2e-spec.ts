/**
 * A generated client in CI: openapi-typescript turns the document the built app serves (TEST_OPENAPI_DOCUMENT, see
 * test/setup/global-setup.mjs) into types; test/client/journeys.ts, written with openapi-fetch against them without
 * casts, must type-check and then run its journeys against a test app.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { withClient } from '../support/database.js';
import { defaultPhoto, insertLibrary } from '../support/libraries.js';
import { useTestSuite } from '../support/suite.js';

const here = new URL('.', import.meta.url).pathname;
const PROGRAM = join(here, 'journeys.ts');

/** Files are typed as Blob (openapi-typescript's default is string); defaults do not make a field required. */
async function generateTypes(): Promise<void> {
  const document = JSON.parse(readFileSync(process.env.TEST_OPENAPI_DOCUMENT!, 'utf8'));
  const ast = await openapiTS(document, {
    defaultNonNullable: false,
    transform(schema) {
      if (schema.format !== 'binary') return undefined;
      return ts.factory.createTypeReferenceNode('Blob');
    },
  });
  mkdirSync(join(here, 'generated'), { recursive: true });
  writeFileSync(join(here, 'generated/openapi.ts'), astToString(ast));
}

function typeErrors(): string[] {
  const program = ts.createProgram([PROGRAM], {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    types: [],
    skipLibCheck: true,
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('generated client (openapi-typescript + openapi-fetch)', () => {
  const { db, t } = useTestSuite({ env: { RATE_LIMIT_ENABLED: 'false' } });
  let baseUrl: string;

  beforeAll(async () => {
    await generateTypes();
    await t.app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
  });

  it('type-checks against the generated types', () => {
    expect(typeErrors()).toEqual([]);
  });

  it('uses no casts, non-null assertions or any', () => {
    const code = readFileSync(PROGRAM, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/\/\/.*$/gm, '');
    expect(code.match(/\bas\s+\w|\bany\b|[\w)\]]!(?!=)/g)).toBeNull();
  });

  it('runs the main journeys against the app', async () => {
    // Imported by a computed name: the project type check must not follow it before the types are generated.
    const specifier = './journeys.js';
    const client = await import(specifier);
    const anonymous = client.apiClient(baseUrl);
    const token = await client.register(anonymous, `client_${Date.now()}`, 'Quiet-Lantern-7319');
    const signedIn = client.apiClient(baseUrl, token);

    const me = await client.me(signedIn);
    expect(me.isStaff).toBe(false);

    const photo = new Blob([await defaultPhoto()], { type: 'image/jpeg' });
    const created = await client.submit(signedIn, photo);
    expect(created.capacity).toBe(40);
    // Moderation approves it (staff journeys are not this client's).
    await withClient(db.url, (c) =>
      c.query("UPDATE libraries SET status = 'approved' WHERE id = $1", [created.id]),
    );
    expect(await client.favourite(signedIn, created.slug)).toBe('Library added to favourites.');

    await insertLibrary(db.url, { slug: 'far-away', status: 'approved', lat: 52.52, lng: 13.4 });
    const near = await client.listNear(anonymous, 47.99, 7.85);
    expect(near.slugs).toEqual([created.slug]);
    expect(await client.search(anonymous, 'Lesekiste')).toEqual(['Lesekiste Lindenweg']);
  });
});
