// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // emit/dist: the emitter package's build output (npm pack builds it; never committed).
  { ignores: ['node_modules/', 'dist/', 'emit/dist/', 'web/dist/', 'data/', '.services/', '.bench-data/', 'schemas/json/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      // Only platform/config.ts may read the environment; everything else takes config as a dependency.
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration through platform/config.ts.' }],
    },
  },
  {
    // The web app runs in the browser (bundled by web/build.ts): browser globals there only.
    files: ['web/app/**'],
    languageOptions: {
      globals: { window: 'readonly', document: 'readonly', location: 'readonly', history: 'readonly', sessionStorage: 'readonly', fetch: 'readonly', performance: 'readonly', requestAnimationFrame: 'readonly', URLSearchParams: 'readonly', queueMicrotask: 'readonly' },
    },
  },
  {
    // Tests, benchmarks and scripts set up environments for child processes; the product code never reads it.
    files: ['platform/config.ts', 'test/**', 'bench/**', 'scripts/**', 'vitest.config.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
);
