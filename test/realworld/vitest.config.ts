import { configDefaults, defineConfig } from 'vitest/config';
import base from '../../vitest.config.js';

// The RealWorld suite alone: `npx vitest run -c test/realworld/vitest.config.ts` (see docs/api-style.md).
export default defineConfig({ ...base, test: { ...base.test, include: ['test/realworld/**/*.test.ts'], exclude: configDefaults.exclude } });
