/**
 * Jest (ESM mode) setup file of every project. @nestjs/throttler and nestjs-pino are CommonJS packages that
 * `require()` the ESM-only @nestjs/common and @nestjs/core. Jest's module registry refuses that require(esm) when the
 * ES module is still being linked ("Cannot require() ES Module … in a cycle"), which is what happens when a test's
 * import graph reaches them first. Importing both packages here, before the test file, leaves them evaluated, so
 * the later require() gets the finished module. Needs Node ≥ 22.12 (require(esm)); `npm test` runs on Node 24.
 */
await import('@nestjs/common');
await import('@nestjs/core');
