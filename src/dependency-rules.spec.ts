/**
 * The dependency rules of docs/architecture.md ("Modules and dependency rules"), checked on the import statements
 * of every source file. Where a rule is not met everywhere yet, the files still breaking it are listed by name: the
 * list may only shrink (a new file breaking the rule fails here).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = process.cwd();
const SRC = join(ROOT, 'src');
const IMPORT =
  /^\s*(?:import|export)\b[^'"]*?from\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Import specifiers of `file`, relative ones resolved to paths under the repository (`src/…`). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT)].map((m) => {
    const specifier = m[1] ?? m[2] ?? m[3];
    return specifier.startsWith('.')
      ? relative(ROOT, resolve(dirname(file), specifier)).replace(/\.js$/, '')
      : specifier;
  });
}

const files = sourceFiles(SRC).map((path) => ({
  name: relative(ROOT, path),
  imports: importsOf(path),
}));

describe('dependency rules', () => {
  it('reads the whole tree', () => {
    expect(files.length).toBeGreaterThan(150);
    expect(files.find((file) => file.name === 'src/app.module.ts')?.imports).toContain(
      'src/map-contribution/map-contribution.module',
    );
  });

  it('nothing outside map-contribution reaches into it (only the app module registers it)', () => {
    const offenders = files.filter(
      (file) =>
        !file.name.startsWith('src/map-contribution/') &&
        file.name !== 'src/app.module.ts' &&
        file.imports.some((target) => target.startsWith('src/map-contribution/')),
    );
    expect(offenders.map((file) => file.name)).toEqual([]);
  });

  it('domain errors import nothing (services and domain code throw them without Nest or HTTP)', () => {
    expect(
      files.find((file) => file.name === 'src/common/errors/domain-errors.ts')?.imports,
    ).toEqual([]);
  });

  it('services do not choose HTTP statuses: no ApiError outside the HTTP layer', () => {
    const offenders = files.filter(
      (file) =>
        file.name.endsWith('.service.ts') && file.imports.includes('src/common/errors/api-error'),
    );
    expect(offenders.map((file) => file.name)).toEqual([]);
  });

  it('services get their transaction type from src/database, not from typeorm', () => {
    const offenders = files.filter(
      (file) => file.name.endsWith('.service.ts') && file.imports.includes('typeorm'),
    );
    // Every service is converted.
    expect(offenders.map((file) => file.name).sort()).toEqual([]);
  });

  it('only src/database uses TypeORM (the pool, migrations and transactions): repositories run on Sql', () => {
    const offenders = files.filter(
      (file) =>
        !file.name.startsWith('src/database/') &&
        file.imports.some((target) => target === 'typeorm' || target.startsWith('@nestjs/typeorm')),
    );
    expect(offenders.map((file) => file.name).sort()).toEqual([]);
  });

  it('converted features reach the database only through src/database (no typeorm, no @nestjs/typeorm)', () => {
    // The features whose repositories write SQL on `Sql`; the rest join this list as they are converted.
    const converted = [
      'src/auth/',
      'src/users/',
      'src/notifications/',
      'src/password-reset/',
      'src/common/idempotency/',
    ];
    const offenders = files.filter(
      (file) =>
        converted.some((dir) => file.name.startsWith(dir)) &&
        file.imports.some(
          (target) =>
            target === 'typeorm' || target.startsWith('typeorm/') || target === '@nestjs/typeorm',
        ),
    );
    expect(files.filter((file) => file.name.startsWith('src/auth/')).length).toBeGreaterThan(10);
    expect(offenders.map((file) => file.name)).toEqual([]);
  });

  it('only src/config reads process.env', () => {
    const offenders = files.filter(
      (file) =>
        !file.name.startsWith('src/config/') &&
        /process\.env\b/.test(readFileSync(join(ROOT, file.name), 'utf8')),
    );
    expect(offenders.map((file) => file.name)).toEqual([]);
  });
});
