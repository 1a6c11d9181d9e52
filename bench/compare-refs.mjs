// `npm run bench:compare -- --base REF [--head REF] [--suites engine,webhooks,cluster] [--rounds N]`:
// the same benchmark suites on two commits, in alternating rounds (A B B A A B …), to tell whether a
// change made `switchyard serve` slower. Each commit is checked out into its own scratch git
// worktree (node_modules linked from this checkout, so the dependencies are this checkout's), its
// dist/ built there, and each round runs one suite script there once (BENCH_ROUNDS=1, the
// in-process rows off), reading the figures from that worktree's bench/results/<suite>.json. The
// repository's own results files are not touched. Writes bench/results/compare-<base>-<head>.{md,json}:
// each figure per round and per commit, the medians, and head / base.
//
// The cluster suite needs BENCH_DATABASE_URL (or SWITCHYARD_TEST_DATABASE_URL), as bench:cluster does.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineFacts } from './lib/machine.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');

const args = Object.fromEntries(
  process.argv
    .slice(2)
    .join(' ')
    .split('--')
    .filter(Boolean)
    .map((part) => {
      const [key, ...value] = part.trim().split(/\s+/);
      return [key, value.join(' ')];
    }),
);
if (!args.base && !args.from) {
  console.error(
    'usage: node bench/compare-refs.mjs --base REF [--head REF] [--suites engine,webhooks,cluster] [--rounds N]\n' +
      '       node bench/compare-refs.mjs --from a.json,b.json (one report of the runs several comparisons saved)',
  );
  process.exit(2);
}
const ROUNDS = Number(args.rounds || 3);
const SUITES = (args.suites || 'engine,webhooks').split(',');

const git = (...argv) => execFileSync('git', argv, { cwd: repo, encoding: 'utf8' }).trim();
/** Saved comparisons of the same two commits, pooled (`--from`): their runs, in their order. */
const saved = args.from ? args.from.split(',').map((file) => JSON.parse(readFileSync(path.resolve(file), 'utf8'))) : [];
const base = saved[0]?.base ?? { ref: args.base, commit: git('rev-parse', '--short', args.base) };
const head = saved[0]?.head ?? { ref: args.head || 'HEAD', commit: git('rev-parse', '--short', args.head || 'HEAD') };

/** A scratch worktree of `side`'s commit with this checkout's node_modules and its own dist/. */
function prepare(side) {
  const dir = mkdtempSync(path.join(os.tmpdir(), `sy-compare-${side.commit}-`));
  rmSync(dir, { recursive: true, force: true });
  git('worktree', 'add', '--detach', dir, side.commit);
  symlinkSync(path.join(repo, 'node_modules'), path.join(dir, 'node_modules'));
  console.log(`${side.commit}: building dist/ in ${dir}`);
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'inherit' });
  return dir;
}

/** The figures one run of a suite wrote, by name: numbers only. */
const EXTRACT = {
  engine: servedRows,
  webhooks: servedRows,
  cluster: (results) => {
    const figures = {};
    for (const [setup, label] of [
      ['cluster', '1 API + 2 workers'],
      ['sqliteAll', 'SQLite serve --role all'],
    ]) {
      const of = results[setup];
      figures[`${label}: immediate completed/s`] = of.immediate.completedPerSecondInWindow;
      figures[`${label}: light claim p50 ms`] = of.claimLight.p50;
      figures[`${label}: light claim p99 ms`] = of.claimLight.p99;
      figures[`${label}: respond_step p99 ms at 8 connections`] = of.respond8.p99;
      figures[`${label}: respond_step answers/s at 8 connections`] = of.respond8.requestsPerSecond;
    }
    figures['1 API + 2 workers: takeover s'] = results.cluster.takeover.killToAllCompletedMs / 1000;
    figures['bare node:http requests/s'] = results.baselines?.[0]?.requestsPerSecond ?? null;
    return figures;
  },
};

/** The judged rows (`serve`) and the bare baselines of an engine or webhooks run, their first number each. */
function servedRows(results) {
  const figures = {};
  for (const row of results.rows) {
    if (row.process !== 'serve' && row.process !== 'bare') continue;
    const value = Number(
      String(row.measured)
        .replace(/,/g, '')
        .match(/-?\d+(\.\d+)?/)?.[0],
    );
    if (Number.isFinite(value)) figures[`${row.benchmark}${row.goal === 'informational' ? '' : ` (${row.goal})`}`] = value;
  }
  return figures;
}

function runSuite(dir, suite) {
  const env = { ...process.env, BENCH_ROUNDS: '1', BENCH_IN_PROCESS: '0' };
  const started = Date.now();
  const run = spawnSync(process.execPath, [`bench/${suite}.mjs`], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`${suite} in ${dir} exited ${run.status}:\n${run.stdout.slice(-2000)}`);
  const results = JSON.parse(readFileSync(path.join(dir, 'bench', 'results', `${suite}.json`), 'utf8'));
  return {
    figures: EXTRACT[suite](results),
    seconds: Math.round((Date.now() - started) / 1000),
    load: os.loadavg().map((l) => l.toFixed(2)),
  };
}

const median = (values) => {
  const sorted = values.filter((v) => typeof v === 'number').sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const dirs = {};
const runs = { base: {}, head: {} };
if (saved.length > 0) {
  for (const one of saved)
    for (const side of ['base', 'head'])
      for (const [suite, list] of Object.entries(one.runs[side])) runs[side][suite] = (runs[side][suite] ?? []).concat(list);
  SUITES.splice(0, SUITES.length, ...Object.keys(runs.base));
} else measure();

function measure() {
  try {
    dirs.base = prepare(base);
    dirs.head = prepare(head);
    for (const suite of SUITES) {
      runs.base[suite] = [];
      runs.head[suite] = [];
      for (let round = 0; round < ROUNDS; round++) {
        // A B, then B A: neither commit always runs first (a warmer machine, a later hour).
        const order = round % 2 === 0 ? ['base', 'head'] : ['head', 'base'];
        for (const side of order) {
          const commit = side === 'base' ? base.commit : head.commit;
          console.log(`${suite} round ${round + 1}/${ROUNDS}: ${side} (${commit})`);
          const run = runSuite(dirs[side], suite);
          runs[side][suite].push(run);
          console.log(`  ${run.seconds} s, load ${run.load.join(' ')}`);
        }
      }
    }
  } finally {
    for (const dir of Object.values(dirs)) {
      try {
        git('worktree', 'remove', '--force', dir);
      } catch {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
}

const name = `compare-${base.commit}-${head.commit}${saved.length > 0 ? '-pooled' : ''}`;
const command =
  saved.length > 0
    ? `node bench/compare-refs.mjs --from ${args.from}`
    : `node bench/compare-refs.mjs --base ${base.ref} --head ${head.ref} --suites ${SUITES.join(',')} --rounds ${ROUNDS}`;
const lines = [
  `# ${base.commit} (base) against ${head.commit} (head)`,
  '',
  `\`${command}\`, ${new Date().toISOString()}.`,
  '',
  'Each suite ran on each commit in alternating order (A B, B A, …), each run one round of the suite',
  'script at its defaults (`switchyard serve` as shipped, its dist/ built from that commit in a scratch',
  'worktree, the same node_modules), the in-process rows off. Ratios are head / base (for a rate higher',
  'is better, for a latency lower is): of the medians, and the median of the ratios of the runs made',
  "side by side in one round, which the host's swings between rounds (see the bare node:http row) do not move.",
  '',
  `Machine${saved.length > 0 ? " (when this report was written; the runs' loads are in the JSON)" : ''}: ${JSON.stringify(machineFacts())}`,
  '',
];
for (const suite of SUITES) {
  lines.push(
    `## ${suite}`,
    '',
    `| figure | base ${base.commit}: runs | head ${head.commit}: runs | base median | head median | head / base | paired ratios' median |`,
    '| --- | --- | --- | --- | --- | --- | --- |',
  );
  const keys = Object.keys(runs.base[suite][0].figures);
  for (const key of keys) {
    const a = runs.base[suite].map((run) => run.figures[key]);
    const b = runs.head[suite].map((run) => run.figures[key]);
    const ma = median(a);
    const mb = median(b);
    const ratio = ma && mb !== null ? (mb / ma).toFixed(2) : '';
    const paired = median(a.map((value, i) => (value && typeof b[i] === 'number' ? b[i] / value : null)));
    const shown = (value) => (value === null ? '' : Number(value.toFixed(3)));
    lines.push(
      `| ${key} | ${a.join(', ')} | ${b.join(', ')} | ${shown(ma)} | ${shown(mb)} | ${ratio} | ${paired === null ? '' : paired.toFixed(2)} |`,
    );
  }
  const seconds = (side) => runs[side][suite].map((run) => run.seconds).join(', ');
  lines.push('', `Run times (s): base ${seconds('base')}; head ${seconds('head')}.`, '');
}
writeFileSync(path.join(here, 'results', `${name}.md`), `${lines.join('\n')}\n`);
writeFileSync(
  path.join(here, 'results', `${name}.json`),
  `${JSON.stringify({ base, head, rounds: runs.base[SUITES[0]].length, runs }, null, 2)}\n`,
);
console.log(`bench/results/${name}.md written`);
if (!existsSync(path.join(here, 'results', `${name}.md`))) process.exit(1);
