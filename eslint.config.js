import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'data/**',
      'coverage/**',
      'bench/tmp/**',
      'test/client/generated/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    // Type-aware rules (issue 15): a forgotten `await` or a promise passed where nothing awaits it is an error.
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    // Plain JavaScript (scripts, browser assets, configs) has no types to check, nor has the generated client's
    // journey script (compiled on its own against the generated client, outside tsconfig.json).
    files: ['**/*.js', '**/*.mjs', '**/*.cjs', 'test/client/journeys.ts'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Tests read supertest's `res.body`, which is `any` by design: its shape is what the test asserts (and every e2e
    // response is validated against the OpenAPI document). Fakes implement async interfaces without awaiting.
    files: ['test/**/*.ts', '**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/require-await': 'off',
    },
  },
  prettier,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Read configuration through src/config only.',
        },
      ],
    },
  },
  {
    files: ['src/config/**/*.ts', 'scripts/**', 'test/**', 'eslint.config.js', 'jest.config.js'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // The staff console's one browser script.
    files: ['src/admin/assets/**/*.js'],
    languageOptions: {
      globals: {
        document: 'readonly',
        HTMLFormElement: 'readonly',
        setTimeout: 'readonly',
      },
    },
  },
  {
    // The public map page's browser module (src/map/assets).
    files: ['src/map/assets/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: {
        document: 'readonly',
        window: 'readonly',
        navigator: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/map-contribution/**', 'src/app.module.ts', 'src/main.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/map-contribution/**', '**/map-contribution'],
              message: 'Only staff wiring may reach the map-contribution module.',
            },
          ],
        },
      ],
    },
  },
);
