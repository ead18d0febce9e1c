/**
 * Each SQLite connection's page cache is bounded by a setting (store/dialects/sqlite/page-cache.ts),
 * not by the driver's build, which allows the server's connection 16,000 KiB: as a database grew,
 * RSS grew with it (bench/SOAK.md).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/framework/app/config.js';
import { openStoreDatabase } from '../../src/store/connection/database.js';

const folder = mkdtempSync(join(tmpdir(), 'restfold-page-cache-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** The server's connection's cache_size, negative in KiB, as SQLite reports it. */
async function cacheSize(options: Parameters<typeof openStoreDatabase>[1]): Promise<unknown> {
  const database = openStoreDatabase(`sqlite:${join(folder, 'cache.sqlite3')}`, options);
  try {
    return (await database.run('PRAGMA cache_size', []))[0];
  } finally {
    await database.close();
  }
}

describe("SQLite's page cache", () => {
  it("holds the server's connection to SQLITE_CACHE_KIB: 2,000 KiB by default, SQLite's own default", async () => {
    expect(loadConfig({}).sqliteCacheKib).toBe(2000);
    expect(loadConfig({ SQLITE_CACHE_KIB: '512' }).sqliteCacheKib).toBe(512);
    expect(() => loadConfig({ SQLITE_CACHE_KIB: '10' })).toThrow(/SQLITE_CACHE_KIB must be an integer >= 64/);
    expect(await cacheSize({ sqliteCacheKib: loadConfig({}).sqliteCacheKib })).toEqual({ cache_size: -2000 });
    expect(await cacheSize({ sqliteCacheKib: 512 })).toEqual({ cache_size: -512 });
    // Opened without settings (a command, a test), the same bound.
    expect(await cacheSize({})).toEqual({ cache_size: -2000 });
  });
});
