/**
 * PostGIS for the embedded database, loaded lazily.
 *
 * @electric-sql/pglite-postgis hands PGlite a 20 MB tarball (95 MB unpacked: PostGIS, raster, topology, their
 * upgrade scripts, PROJ data). PGlite unpacks all of it into its in-memory file system on every start and compiles
 * every `.so` in it (three WebAssembly modules of 15–17 MB) before the first query, whether a query ever needs them.
 * That cost the worker about 600 MB of RSS and 4–5 s per start (measured; docs/architecture.md).
 *
 * Here the tarball is unpacked once to disk (`<dataDir>/extensions/postgis-<version>`, by `tar`), and PGlite's file
 * system only gets symbolic links to those files through a NODEFS mount. Nothing is copied into memory; PostgreSQL
 * compiles `postgis-3.so` when a query first needs it (its own `dlopen`), and never the raster or topology modules.
 * Everything else (PROJ settings, the extension's SQL) is the package's own.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Extension } from '@electric-sql/pglite';
import { postgis } from '@electric-sql/pglite-postgis';
import { x as untar } from 'tar';

/** The bits of PGlite's Emscripten module this uses. */
interface EmscriptenFs {
  mkdirTree(path: string): void;
  mount(type: unknown, options: { root: string }, mountpoint: string): void;
  symlink(target: string, path: string): void;
  analyzePath(path: string): { exists: boolean };
  filesystems: { NODEFS: unknown };
}
type PreRun = (module: { FS: EmscriptenFs }) => void;

const PGLITE_PREFIX = '/pglite';
const MOUNT = '/postgis-files';

/** Unpacks the package's bundle under `dataDir` once per package version; returns the directory. */
export function unpackedPostgis(dataDir: string): string {
  const dist = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite-postgis'));
  const { version } = JSON.parse(readFileSync(join(dist, '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  const target = join(dataDir, 'extensions', `postgis-${version}`);
  if (existsSync(target)) return target;
  const partial = `${target}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  untar({ file: join(dist, 'postgis.tar.gz'), cwd: partial, sync: true });
  renameSync(partial, target);
  return target;
}

/** Links every file of `root` into PGlite's tree (`/pglite/...`) through the NODEFS mount. */
function linkInto(fs: EmscriptenFs, root: string, relative = ''): void {
  for (const name of readdirSync(join(root, relative))) {
    const path = relative ? `${relative}/${name}` : name;
    const onDisk = join(root, path);
    const inPglite = `${PGLITE_PREFIX}/${path}`;
    const stat = lstatSync(onDisk);
    if (stat.isDirectory()) {
      if (!fs.analyzePath(inPglite).exists) fs.mkdirTree(inPglite);
      linkInto(fs, root, path);
    } else if (!fs.analyzePath(inPglite).exists) {
      fs.symlink(stat.isSymbolicLink() ? readlinkSync(onDisk) : `${MOUNT}/${path}`, inPglite);
    }
  }
}

/** The `postgis` extension of pglite-postgis, with its files served from `directory` instead of its tarball. */
export function lazyPostgis(directory: string): Extension {
  return {
    name: 'postgis',
    setup: async (pg, emscriptenOpts: { preRun?: PreRun[] }) => {
      const { emscriptenOpts: options } = (await postgis.setup(pg, emscriptenOpts)) as {
        emscriptenOpts: { preRun?: PreRun[] };
      };
      const mountFiles: PreRun = ({ FS }) => {
        FS.mkdirTree(MOUNT);
        FS.mount(FS.filesystems.NODEFS, { root: directory }, MOUNT);
        linkInto(FS, directory);
      };
      return { emscriptenOpts: { ...options, preRun: [...(options.preRun ?? []), mountFiles] } };
    },
  };
}
