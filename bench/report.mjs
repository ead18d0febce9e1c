/**
 * bench/RESULTS.md: one section per configuration (database, rows, workers),
 * replaced when that configuration is measured again; text outside the
 * sections (notes, the profile summary) is kept as written.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const FILE = new URL('./RESULTS.md', import.meta.url);
const HEADER = `# Benchmark results

Written by \`npm run bench\` (see docs/performance.md); each section below is one configuration, replaced when it is
measured again. Text outside the sections is kept.
`;

const number = (value, digits = 0) => value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const DATABASES = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

function table(results) {
  const baselineRps = new Map(results.filter((r) => r.server === 'baseline').map((r) => [r.scenario.key, r.rps]));
  const lines = [
    '| Scenario | Server | req/s | req/s by round | % of baseline | p50 ms | p99 ms | errors | non-2xx | server RSS MB |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const r of results) {
    const ceiling = r.server === 'baseline' ? undefined : baselineRps.get(r.scenario.key);
    const share = ceiling ? `${number((100 * r.rps) / ceiling)} %` : '';
    const rounds = r.rounds.length > 1 ? `${number(Math.min(...r.rounds))}–${number(Math.max(...r.rounds))}` : '';
    lines.push(
      `| ${r.scenario.title} | ${r.server} | ${number(r.rps)} | ${rounds} | ${share} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.non2xx} | ${number(r.rssMb)} |`,
    );
  }
  return lines.join('\n');
}

function searchComparison(results) {
  const rpsOf = (key) => results.find((r) => r.server === 'restfold' && r.scenario.key === key)?.rps;
  const indexed = rpsOf('b');
  const scanned = rpsOf('b-noindex');
  if (!indexed || !scanned) return '';
  return `\nSearch (b) with the pg_trgm GIN indexes runs at **${number(indexed / scanned, 1)}x** the req/s of the same query without them.\n`;
}

/**
 * The same scenarios served another way in the same run (more workers, pooler mode), against the
 * same server's default: `restfold, 2 workers` against `restfold`, `baseline, pooler mode` against `baseline`.
 */
function variantsComparison(results, workers) {
  const rps = new Map(results.map((r) => [`${r.server}\n${r.scenario.key}`, r.rps]));
  const variants = new Map();
  for (const r of results.filter((r) => r.server.includes(', '))) variants.set(r.server, [...(variants.get(r.server) ?? []), r]);
  const lines = [...variants].map(([server, runs]) => {
    const [base, ...variant] = server.split(', ');
    const changes = runs.map((r) => {
      const change = 100 * (r.rps / rps.get(`${base}\n${r.scenario.key}`) - 1);
      return `(${r.scenario.key}) ${change >= 0 ? '+' : '−'}${number(Math.abs(change))} %`;
    });
    return `${base}, ${variant.join(', ')}, against ${base} with ${workers} worker(s) and named statements, in this run: ${changes.join(', ')}.`;
  });
  return lines.length > 0 ? `\n${lines.join('\n\n')}\n` : '';
}

export function writeSection(run) {
  // A run of some scenarios only must not replace the table of a run of them all.
  const key = `${run.db}:${run.rows}:w${run.workers}${run.only.length > 0 ? `:${run.only.join(',')}` : ''}${run.replica ? ':replica' : ''}`;
  const { machine, seeded } = run;
  const section = [
    `<!-- bench:${key} -->`,
    `## ${DATABASES[run.db]}, ${number(run.rows)} users and articles, ${run.workers} worker(s)${run.only.length > 0 ? `, scenarios ${run.only.join(', ')} only` : ''}${run.replica ? ', with a read replica' : ''}`,
    '',
    ...(run.note ? [`> ${run.note}`, ''] : []),
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machine.cores} cores (${machine.cpu}), Node ${machine.node}; ` +
      `autocannon with ${run.connections} connections over loopback, ${run.duration} s per scenario after a warm-up (until each worker has answered ${number(run.warmup.requestsPerWorker)} requests, or ${run.warmup.limitSeconds} s), each on a fresh server, one server at a time; ` +
      `the scenarios with a baseline alternate between the servers ${run.rounds} times and show each one's median round; ` +
      `before and after each measurement the run waits up to ${number(run.settle)} s for the machine to go quiet; ` +
      `seeding took ${number(seeded.seconds, 1)} s. The search term matches ${number(seeded.searchMatches)} users.`,
    '',
    table(run.results),
    searchComparison(run.results),
    variantsComparison(run.results, run.workers),
    '<!-- /bench -->',
  ].join('\n');

  const text = existsSync(FILE) ? readFileSync(FILE, 'utf8') : HEADER;
  const pattern = new RegExp(`<!-- bench:${key} -->[\\s\\S]*?<!-- /bench -->`);
  writeFileSync(FILE, pattern.test(text) ? text.replace(pattern, section) : `${text.trimEnd()}\n\n${section}\n`);
}
