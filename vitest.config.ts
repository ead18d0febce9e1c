import { defineConfig } from 'vitest/config';

// Suites under test/api run once per database; RESTFOLD_TEST_DB picks which (see scripts/test.js).
export default defineConfig({
  // Examples import the package by its name; in-process tests give them the source.
  resolve: {
    alias: [
      { find: /^restfold$/, replacement: new URL('./src/framework/index.ts', import.meta.url).pathname },
      { find: /^restfold\/testing$/, replacement: new URL('./src/testing/index.ts', import.meta.url).pathname },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
