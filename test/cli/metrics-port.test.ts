/** With METRICS_PORT, /metrics is served on that port only, never on the public one. */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('timed out');
}

it('serves metrics on METRICS_PORT and not on the public port', async () => {
  const directory = mkdtempSync(join(tmpdir(), 'restfold-metrics-'));
  const port = 20_000 + Math.floor(Math.random() * 12_000); // below Linux's ephemeral ports (32768 on), which outgoing connections take
  const metricsPort = port + 1;
  const server = spawn('node', ['dist/cli.js', 'serve'], {
    cwd: root,
    stdio: 'ignore',
    env: { ...process.env, PORT: String(port), METRICS: 'true', METRICS_PORT: String(metricsPort), LOG_LEVEL: 'warn', SHUTDOWN_DRAIN_MS: '0', DATABASE_URL: `sqlite:${join(directory, 'db.sqlite3')}` },
  });
  try {
    await until(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
    await until(async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).ok);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toContain('restfold_http_requests_total{method="GET",route="/healthz",status="200"}');
    expect((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404);
  } finally {
    server.kill('SIGTERM');
    rmSync(directory, { recursive: true, force: true });
  }
});
