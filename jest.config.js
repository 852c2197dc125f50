/** Transpile only: the type check is `npm run typecheck`. The OpenAPI test reads the built (plugin-compiled) app. */
const tsJest = ['ts-jest', { useESM: true, tsconfig: 'tsconfig.jest.json' }];

const common = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': tsJest },
  // Lets the CommonJS @nestjs/throttler and nestjs-pino load under ESM Jest (see the file).
  setupFiles: ['<rootDir>/test/setup/preload-nest.mjs'],
};

/** @type {import('jest').Config} */
export default {
  // Per-project testTimeout is ignored by Jest; e2e suites on the embedded database need the headroom.
  testTimeout: 60_000,
  // Every test file imports the app anew in its own VM context (ESM), and a worker's heap keeps growing with the
  // files it has run: the whole suite once took a worker past V8's 4 GB heap limit (out of memory). A worker whose
  // heap is above this after a file is replaced by a fresh one.
  workerIdleMemoryLimit: '2GB',
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/migrations/**/*.spec.ts'],
    },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/setup/global-setup.mjs',
      globalTeardown: '<rootDir>/test/setup/global-teardown.mjs',
    },
    {
      // The staff console in Chromium (test/support/browser.ts); needs the build and the e2e databases.
      ...common,
      displayName: 'browser',
      testMatch: ['<rootDir>/test/**/*.browser-spec.ts'],
      globalSetup: '<rootDir>/test/setup/global-setup.mjs',
      globalTeardown: '<rootDir>/test/setup/global-teardown.mjs',
    },
  ],
};
