import { configDefaults, defineConfig } from 'vitest/config';

// Suites under test/api run once per database; RESTFOLD_TEST_DB picks which (see scripts/test.js).
export default defineConfig({
  // Examples import the package by its name; in-process tests give them the source.
  resolve: { alias: { restfold: new URL('./src/framework/index.ts', import.meta.url).pathname } },
  test: {
    include: ['test/**/*.test.ts'],
    // The RealWorld (Conduit) suite is the target examples/realworld does not reach yet (docs/api-style.md):
    // run by hand with its own config, until it passes and joins scripts/test.js.
    exclude: [...configDefaults.exclude, 'test/realworld/**'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
