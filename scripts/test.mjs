#!/usr/bin/env node
/**
 * `npm test`: lint, type check, build, then every Jest suite (unit + e2e). Ends with the plain line
 * `N passed, N failed` that CI reads (lint, formatting and the type check count as one check each).
 * Extra arguments go to Jest, e.g. `npm test -- test/platform`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serverWithPostgis } from './postgis-server.mjs';

const root = new URL('..', import.meta.url).pathname;
/**
 * Jest runs on Node 24 (the `node` dev dependency, which npm scripts find first on PATH). Run directly by an older
 * system Node, this script still starts Jest on the project's Node: @nestjs/throttler and nestjs-pino load under
 * ESM Jest only with require(esm) (test/setup/preload-nest.mjs).
 */
const projectNode = join(root, 'node_modules', '.bin', 'node');
const jestNode =
  Number(process.versions.node.split('.')[0]) < 24 && existsSync(projectNode)
    ? projectNode
    : process.execPath;
const jestArgs = process.argv.slice(2);
let passed = 0;
let failed = 0;

function step(name, command, args, env = {}) {
  process.stdout.write(`\n== ${name}: ${command} ${args.join(' ')}\n`);
  const result = spawnSync(command, args, {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ...env },
  });
  return result.status === 0;
}

function check(name, command, args) {
  if (step(name, command, args)) passed += 1;
  else {
    failed += 1;
    process.stdout.write(`!! ${name} failed\n`);
  }
}

const jestNodeVersion = spawnSync(jestNode, ['--version'], { encoding: 'utf8' }).stdout.trim();
process.stdout.write(`npm test on Node ${process.version}; Jest on Node ${jestNodeVersion}\n`);

check('lint', 'npx', ['eslint', '.', '--max-warnings', '0']);
check('format', 'npx', ['prettier', '--check', '.']);
check('typecheck', 'npx', ['tsc', '-p', 'tsconfig.json', '--noEmit']);
if (!step('build', 'npx', ['nest', 'build'])) {
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exit(1);
}

const report = join(mkdtempSync(join(tmpdir(), 'bookcase-jest-')), 'report.json');
const serial = !(await serverWithPostgis(
  process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
));
if (serial)
  process.stdout.write(
    '\nNo PostgreSQL+PostGIS server: e2e runs serially on the embedded database.\n',
  );
const jestOk = step('jest', jestNode, [
  '--experimental-vm-modules',
  '--no-warnings=ExperimentalWarning',
  'node_modules/jest/bin/jest.js',
  '--json',
  `--outputFile=${report}`,
  ...(serial ? ['--runInBand'] : []),
  ...jestArgs,
]);

function count(reportFile) {
  let results = null;
  try {
    results = JSON.parse(readFileSync(reportFile, 'utf8'));
  } catch {
    // Jest did not write a report (it crashed before running): counted as one failure below.
  }
  if (results) {
    passed += results.numPassedTests;
    failed += results.numFailedTests;
    if (results.numRuntimeErrorTestSuites) failed += results.numRuntimeErrorTestSuites;
    if (results.numPendingTests) process.stdout.write(`(${results.numPendingTests} skipped)\n`);
  } else {
    failed += 1;
  }
}
count(report);

/**
 * The media suites a second time with every app's media on a loopback S3 server (s3rver, the app on the AWS SDK):
 * MEDIA_STORAGE=s3 must pass what the local disk passes. Only on a full run (no Jest arguments).
 */
const MEDIA_SUITES = [
  'test/libraries/create.e2e-spec.ts',
  'test/libraries/upload.e2e-spec.ts',
  'test/libraries/owner-edit.e2e-spec.ts',
  'test/libraries/detail.e2e-spec.ts',
  'test/libraries/reports-and-mine.e2e-spec.ts',
  'test/libraries/idempotency.e2e-spec.ts',
  'test/community-photos/community-photos.e2e-spec.ts',
  'test/moderation/libraries.e2e-spec.ts',
  'test/moderation/photos.e2e-spec.ts',
  'test/moderation/reports.e2e-spec.ts',
  'test/moderation/staff-edit-and-audit.e2e-spec.ts',
  'test/export/export.e2e-spec.ts',
];
let s3Ok = true;
if (jestArgs.length === 0 && !serial) {
  const s3Report = join(mkdtempSync(join(tmpdir(), 'bookcase-jest-s3-')), 'report.json');
  s3Ok = step(
    'jest (media suites, MEDIA_STORAGE=s3)',
    jestNode,
    [
      '--experimental-vm-modules',
      '--no-warnings=ExperimentalWarning',
      'node_modules/jest/bin/jest.js',
      '--selectProjects',
      'e2e',
      '--json',
      `--outputFile=${s3Report}`,
      ...MEDIA_SUITES,
    ],
    { TEST_MEDIA_STORAGE: 's3' },
  );
  count(s3Report);
}
const ok = jestOk && s3Ok && failed === 0;
console.log(`${passed} passed, ${failed} failed`);
process.exit(ok ? 0 : 1);
