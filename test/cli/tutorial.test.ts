/**
 * docs/tutorial.md, run as written: its shell blocks (`<!-- tutorial: … -->`) through bash, one after
 * another in one session, in a temporary folder outside the checkout, against `npm pack`'s tarball; its
 * code samples written where the tutorial says to write them. Only the tarball's path, the ports and the
 * production database differ from the page. Then its claims: the answers it quotes, the typed client's
 * output, the deployed server answering for its host alone, and the app and client type-checked strictly.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../support/database.js';
import { blocksOf, region, root, sampleSource } from '../support/doc-samples.js';
import { packedBuild } from '../support/packed-install.js';

const PAGE = 'docs/tutorial.md';
const port = 20_000 + Math.floor(Math.random() * 6_000); // below Linux's ephemeral ports, which outgoing connections take
const deployPort = port + 6_000;
const schema = `rf_tutorial_${randomBytes(6).toString('hex')}`;

let folder: string;
let output = '';
let script: ChildProcess | undefined;

/** A single-quoted shell word. */
const quoted = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;
const waitFor = (url: string, header = ''): string =>
  `for attempt in $(seq 300); do curl -s -o /dev/null ${header} ${url} && break; sleep 0.2; done\n`;

/** The production database of the deploy step: a schema of its own on PostgreSQL when the suite has one, else a SQLite file. */
function productionUrl(): string {
  if (!process.env.TEST_DATABASE_URL) return `sqlite:${join(folder, 'production.sqlite3')}`;
  const url = new URL(process.env.TEST_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/** The tutorial as one bash script: its blocks in order, each sample written to its file before the next block runs. */
function tutorialScript(tarball: string): string {
  let text = 'set -euo pipefail\n';
  let written = '';
  for (const block of blocksOf(PAGE)) {
    if (block.marker?.kind === 'sample') {
      const { file, name } = sampleSource(block);
      // Written where the tutorial's folder is once the first block has made it: before the next block.
      written += `cat > ${basename(file)} <<'SAMPLE'\n${region(file, name)}SAMPLE\n`;
      continue;
    }
    if (block.marker?.kind !== 'tutorial') continue;
    let code = block.code
      .replaceAll('path/to/restfold/restfold-0.1.0.tgz', quoted(tarball))
      .replaceAll('127.0.0.1:8000', `127.0.0.1:${port}`);
    text += written;
    written = '';
    if (block.marker.argument === 'run') text += code;
    else if (block.marker.argument === 'serve') text += `( ${code.trim()} ) > serve.log 2>&1 &\n${waitFor(`http://127.0.0.1:${port}/healthz`)}`;
    else if (block.marker.argument === 'deploy') {
      code = code.replace('postgres://notes@db.internal:5432/notes', quoted(productionUrl())).replace('PORT=8000', `PORT=${deployPort}`);
      const host = "-H 'Host: api.example.com'";
      text += `( ${code.trim()} ) > deploy.log 2>&1 &\n${waitFor(`http://127.0.0.1:${deployPort}/readyz`, host)}`;
      for (const [name, extra, path] of [['readyz', host, '/readyz'], ['notes', host, '/api/v1/notes/'], ['wrong-host', '', '/api/v1/notes/']] as const) {
        text += `echo "DEPLOY ${name} $(curl -s -o /dev/null -w '%{http_code}' ${extra} http://127.0.0.1:${deployPort}${path})"\n`;
      }
    } else throw new Error(`${PAGE}:${block.line}: no such tutorial step "${block.marker.argument}"`);
  }
  return text;
}

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'restfold-tutorial-'));
  const { tarball, prebuilds } = packedBuild();
  // The page names the tarball of this version; a new version must change the page too.
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  expect(basename(tarball)).toBe(`restfold-${version}.tgz`);
  expect(readFileSync(join(root, PAGE), 'utf8')).toContain(`restfold-${version}.tgz`);
  if (process.env.TEST_DATABASE_URL) await onPostgres((client) => client.query(`CREATE SCHEMA ${schema}`));

  script = spawn('bash', ['-c', tutorialScript(tarball)], {
    cwd: folder,
    detached: true, // its own process group: the servers it starts in the background are stopped with it
    env: {
      ...process.env,
      PORT: String(port),
      API_URL: `http://127.0.0.1:${port}`, // the typed client's server, 127.0.0.1:8000 on the page
      LOG_LEVEL: 'warn',
      npm_config_better_sqlite3_local_prebuilds: prebuilds,
      npm_config_prefer_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  script.stdout!.on('data', (chunk: Buffer) => (output += chunk));
  script.stderr!.on('data', (chunk: Buffer) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => script!.once('exit', resolve));
  if (code !== 0) throw new Error(`the tutorial's commands failed (exit ${code}):\n${output}`);
}, 600_000);

afterAll(async () => {
  try {
    if (script?.pid) process.kill(-script.pid, 'SIGTERM');
  } catch {
    // the group is gone already
  }
  if (process.env.TEST_DATABASE_URL) await onPostgres((client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
  if (folder) rmSync(folder, { recursive: true, force: true });
}, 120_000);

describe('the tutorial, run as written', () => {
  it('creates, filters and updates notes over HTTP, and answers the 400 it quotes', () => {
    expect(output).toMatch(/"title":"Water the plants","done":false,"created_at":"[^"]+","due":"2026-12-01","priority":"high"/);
    expect(output).toMatch(/\{"count":1,"next":null,"previous":null,"results":\[\{"id":1,"title":"Water the plants"/);
    expect(output).toMatch(/\{"id":1,"title":"Water the plants","done":true,/);
    const quote = /The last one answers\n`([^`]+)`/.exec(readFileSync(join(root, PAGE), 'utf8'))![1]!;
    expect(output).toContain(quote);
  });

  it('runs the typed client against the served app', () => {
    expect(output).toMatch(/^3 Typed high$/m);
    expect(output).toMatch(/^2 \[.*'Typed'.*\]$/m);
  });

  it('deploys: migrated, ready, answering for its own host only', () => {
    expect(output).toContain('DEPLOY readyz 200');
    expect(output).toContain('DEPLOY notes 401');
    expect(output).toContain('DEPLOY wrong-host 400');
  });

  it("type-checks the app and the client strictly against the installed package's types and the generated ones", () => {
    const app = join(folder, 'my-api');
    const diagnostics = ts
      .getPreEmitDiagnostics(
        ts.createProgram([join(app, 'app.ts'), join(app, 'client.mts')], {
          strict: true,
          noEmit: true,
          target: ts.ScriptTarget.ES2022,
          module: ts.ModuleKind.NodeNext,
          moduleResolution: ts.ModuleResolutionKind.NodeNext,
          // Node's types, as `npm install --save-dev @types/node` would give the folder.
          typeRoots: [join(root, 'node_modules', '@types')],
          types: ['node'],
        }),
      )
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);
  }, 120_000);
});
