import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const DIR = join(process.cwd(), 'src/map-contribution/domain');
const IMPORT =
  /^\s*(?:import|export)\b[^'"]*?from\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

function imports(file: string): string[] {
  const text = readFileSync(join(DIR, file), 'utf8');
  return [...text.matchAll(IMPORT)].map((m) => m[1] ?? m[2] ?? m[3]);
}

describe('map-contribution domain stays pure', () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.ts'));
  const code = files.filter((f) => !f.endsWith('.spec.ts'));

  it('finds the domain files', () => {
    expect(code).toEqual(
      expect.arrayContaining([
        'batching.ts',
        'duplicates.ts',
        'eligibility.ts',
        'normalise.ts',
        'state-machine.ts',
        'tag-mapping.ts',
        'types.ts',
      ]),
    );
  });

  it('sees multi-line and type-only imports', () => {
    expect(imports('duplicates.ts')).toEqual(['./normalise.js', './types.js']);
  });

  // Besides its siblings, the domain may raise the app's domain errors: a file that imports nothing itself
  // (src/dependency-rules.spec.ts checks that), so no Nest, HTTP or database comes in through it.
  it.each(code)('%s imports only sibling domain modules and the domain errors', (file) => {
    for (const specifier of imports(file))
      expect(specifier).toMatch(/^(\.\/[a-z-]+|\.\.\/\.\.\/common\/errors\/domain-errors)\.js$/);
  });

  it.each(code)('%s reads no clock, environment, network or randomness', (file) => {
    const text = readFileSync(join(DIR, file), 'utf8');
    expect(text).not.toMatch(
      /\bDate\.now\(|new Date\(\)|process\.|Math\.random|\bfetch\(|require\(/,
    );
  });

  it.each(files.filter((f) => f.endsWith('.spec.ts')))(
    '%s tests imports only the domain, fast-check and node:fs/path',
    (file) => {
      for (const specifier of imports(file)) {
        expect(specifier).toMatch(/^(?:\.\/[a-z-]+\.js|fast-check|node:fs|node:path)$/);
      }
    },
  );
});
