#!/usr/bin/env node
/**
 * `node scripts/framework-migrations.mjs [--check]` (after `npm run build`): makemigrations for the
 * framework's own tables (the User model, store/accounts/tables.ts) into src/store/accounts/migrations/.
 * With --check, exits 1 naming what changed when the declarations have no migration yet.
 */
import { fileURLToPath } from 'node:url';
import { frameworkState } from '../dist/framework/app/declared-schema.js';
import { planMigration, writeMigration } from '../dist/framework/app/makemigrations.js';
import migrations from '../dist/store/accounts/migrations/index.js';

const folder = { path: fileURLToPath(new URL('../src/store/accounts/migrations/', import.meta.url)), extension: '.ts', importFrom: '../../schema/operations.js' };
const state = frameworkState();
const plan = planMigration(state, migrations);
if (plan.changes.length === 0) {
  console.log('No changes.');
} else if (process.argv.includes('--check')) {
  console.error(`The framework's declarations have changed without a migration:\n  ${plan.changes.join('\n  ')}`);
  process.exit(1);
} else {
  console.log(`Wrote ${await writeMigration(folder, plan, state, { generatedBy: 'node scripts/framework-migrations.mjs' })}`);
}
