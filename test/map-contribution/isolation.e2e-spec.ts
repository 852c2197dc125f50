/**
 * Nothing outside the staff wiring can invoke the map contribution: no file under src/ outside
 * src/map-contribution/ imports it, except src/app.module.ts (which registers the module). The scan reads the
 * source text (static and dynamic imports, re-exports, require), so it also catches what a lint config could miss.
 * Also: the workflow has no periodic or queued trigger, and no code path updates or deletes audit events.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;
const src = join(root, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(?:[cm]?[jt]s|tsx)$/.test(entry.name) ? [path] : [];
  });
}

/** Every module specifier of a source text: import/export … from, bare import, import(), require(). */
export function moduleSpecifiers(text: string): string[] {
  const withoutComments = text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const patterns = [
    /\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"`]([^'"`]+)['"`]/g,
    /\bimport\s*['"`]([^'"`]+)['"`]/g,
    /\bimport\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g,
    /\brequire\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g,
  ];
  return patterns.flatMap((pattern) => [...withoutComments.matchAll(pattern)].map((m) => m[1]));
}

const reachesMapContribution = (specifier: string) =>
  /(^|\/)map-contribution(\/|$)/.test(specifier);

describe('map contribution isolation', () => {
  it('the scanner recognises every import form (and ignores comments)', () => {
    const sample = [
      "import { MapContributionService } from '../map-contribution/map-contribution.service.js';",
      "import type { Tags } from\n  '../map-contribution/domain/types.js';",
      "export * from './map-contribution/index.js';",
      "import '../map-contribution/side-effect.js';",
      "const lazy = await import('../map-contribution/map-contribution.module.js');",
      "const old = require('../map-contribution');",
      "// import { x } from '../map-contribution/commented.js';",
      "/* import { y } from '../map-contribution/block.js'; */",
      "import { Other } from '../libraries/libraries.service.js';",
    ].join('\n');
    expect(moduleSpecifiers(sample).filter(reachesMapContribution)).toEqual([
      '../map-contribution/map-contribution.service.js',
      '../map-contribution/domain/types.js',
      './map-contribution/index.js',
      '../map-contribution/side-effect.js',
      '../map-contribution/map-contribution.module.js',
      '../map-contribution',
    ]);
  });

  it('no file under src/ outside src/map-contribution/ imports it, except src/app.module.ts', () => {
    const files = sourceFiles(src);
    expect(files.length).toBeGreaterThan(50);
    const offenders = files
      .map((file) => relative(root, file))
      .filter((file) => !file.startsWith('src/map-contribution/') && file !== 'src/app.module.ts')
      .flatMap((file) =>
        moduleSpecifiers(readFileSync(join(root, file), 'utf8'))
          .filter(reachesMapContribution)
          .map((specifier) => `${file} → ${specifier}`),
      );
    expect(offenders).toEqual([]);
  });

  it('app.module.ts only registers the module', () => {
    const imports = moduleSpecifiers(readFileSync(join(src, 'app.module.ts'), 'utf8')).filter(
      reachesMapContribution,
    );
    expect(imports).toEqual(['./map-contribution/map-contribution.module.js']);
  });

  it('the workflow has no timer, schedule or queue, and never updates or deletes audit events', () => {
    const files = sourceFiles(join(src, 'map-contribution')).filter(
      (file) => !file.endsWith('.spec.ts'),
    );
    const offenders: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      const name = relative(root, file);
      if (/\bsetInterval\b|@Cron\b|@Interval\b|@Processor\b/.test(text)) {
        offenders.push(`${name}: periodic or queued trigger`);
      }
      for (const specifier of moduleSpecifiers(text)) {
        if (
          /^(?:@nestjs\/schedule|@nestjs\/bull(?:mq)?|bull(?:mq)?|node-cron|cron|agenda)$/.test(
            specifier,
          )
        ) {
          offenders.push(`${name}: imports ${specifier}`);
        }
      }
      if (/(?:UPDATE|DELETE\s+FROM|TRUNCATE)\s+map_contribution_events/i.test(text)) {
        offenders.push(`${name}: changes audit events`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
