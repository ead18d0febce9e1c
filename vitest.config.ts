import { defineConfig } from 'vitest/config';

// Suites under test/api run once per database; RESTFOLD_TEST_DB picks which (see scripts/test.js).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
