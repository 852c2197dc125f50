import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**', 'bench/tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
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
    files: [
      'src/config/**/*.ts',
      'scripts/**',
      'test/**',
      'ormconfig.ts',
      'eslint.config.js',
      'jest.config.js',
    ],
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
