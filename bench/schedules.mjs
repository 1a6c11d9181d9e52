// `npm run bench:schedules`: 10,000 active schedules firing each minute on `switchyard serve`
// (node dist/main.js serve, embedded SQLite, defaults but the API rate limit, as every suite).
// Sets the schedules up through the API (one workflow each: a `schedule` trigger with cron
// `* * * * *`, activated), lets them fire for BENCH_MINUTES whole minutes, then reads every
// execution from the server's database file (read-only) and reports the fire-time lag
// (`fired_at - scheduled_at`, the time the scheduler created the execution for a fire time),
// the start lag (the execution began running), duplicates (one fire time started twice) and
// missed fires. Writes bench/results/schedules.{md,json}. See bench/README.md.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { codeVersion, describeCode } from './lib/code-version.mjs';
import { wholeNumber } from './lib/env-number.mjs';
import { machineFacts } from './lib/machine.mjs';
import { spawnServe } from './lib/spawn-serve.mjs';
import { summary } from './lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const SEED = path.join(here, 'schedules', 'seed-schedules.mjs');
const settings = {
  date: new Date().toISOString(),
  code: codeVersion(),
  schedules: wholeNumber('BENCH_SCHEDULES', 10_000),
  minutes: wholeNumber('BENCH_MINUTES', 2),
  cron: '* * * * *',
};
const log = (line) => console.log(line);
const loadBefore = machineFacts().loadAverage;

// The schedules are activated by a seeding child through the workflow service before serve
// starts (schedules/seed-schedules.mjs): through HTTP on this shared machine it took ~80 ms a
// schedule. Serve then finds them in its database, as after a restart.
const server = await spawnServe({
  id: 'schedules',
  env: { SWITCHYARD_API_RATE_LIMIT: '10000000' },
  seed: settings.schedules,
  seedScript: SEED,
  seedArgs: [settings.cron],
});
let result;
try {
  const setupMs = server.seeded.ms;
  log(`setup: ${settings.schedules} active schedules in ${(setupMs / 1000).toFixed(1)} s`);

  // The measured minutes: the first whole minute that starts after the setup, and those after it.
  const firstMinute = Math.ceil((Date.now() + 1000) / 60_000) * 60_000;
  const measured = Array.from({ length: settings.minutes }, (_, i) => firstMinute + i * 60_000);
  const loadDuring = [];
  for (const minute of measured) {
    await sleep(Math.max(0, minute + 30_000 - Date.now()));
    loadDuring.push(machineFacts().loadAverage);
    log(`  ${new Date(minute).toISOString()} passed; load ${loadDuring.at(-1).join(' ')}`);
  }
  // Let the last minute's executions finish before reading.
  await sleep(Math.max(0, measured.at(-1) + 45_000 - Date.now()));

  const db = new SQLite(server.databaseFile, { readonly: true, fileMustExist: true });
  const rows = db.prepare('select workflow_id, inputs, started_at, status from executions').all();
  db.close();
  const ms = (iso) => Date.parse(iso);
  const byMinute = new Map(measured.map((minute) => [minute, []]));
  const seen = new Map();
  let outside = 0;
  for (const row of rows) {
    // The schedule trigger's output: {payload: {scheduled_at, fired_at, missed}, event} (DESIGN.md).
    const { payload } = JSON.parse(row.inputs);
    const scheduled = ms(payload.scheduled_at);
    const key = `${row.workflow_id} ${payload.scheduled_at}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
    const bucket = byMinute.get(scheduled);
    if (!bucket) {
      outside += 1;
      continue;
    }
    bucket.push({
      fireLag: ms(payload.fired_at) - scheduled,
      startLag: row.started_at ? ms(row.started_at) - scheduled : null,
      status: row.status,
    });
  }
  const duplicates = [...seen.values()].reduce((sum, count) => sum + count - 1, 0);
  const all = [...byMinute.values()].flat();
  result = {
    settings,
    machine: machineFacts(),
    loadAverage: { before: loadBefore, during: loadDuring },
    setupSeconds: Number((setupMs / 1000).toFixed(1)),
    executionsRead: rows.length,
    firesOutsideMeasuredMinutes: outside,
    duplicates,
    minutes: measured.map((minute) => {
      const fires = byMinute.get(minute);
      return {
        minute: new Date(minute).toISOString(),
        fired: fires.length,
        missed: settings.schedules - fires.length,
        completed: fires.filter((f) => f.status === 'completed').length,
        fireLagMs: fires.length
          ? summary(
              fires.map((f) => f.fireLag),
              1,
            )
          : null,
        startLagMs: fires.some((f) => f.startLag !== null)
          ? summary(
              fires.filter((f) => f.startLag !== null).map((f) => f.startLag),
              1,
            )
          : null,
      };
    }),
    fireLagMs: all.length
      ? summary(
          all.map((f) => f.fireLag),
          1,
        )
      : null,
    startLagMs: all.some((f) => f.startLag !== null)
      ? summary(
          all.filter((f) => f.startLag !== null).map((f) => f.startLag),
          1,
        )
      : null,
  };
} finally {
  const stopped = await server.stop();
  if (result) result.serveLog = stopped.log;
}

const target = 1000;
const lines = [
  '# Schedules benchmark',
  '',
  `${settings.schedules.toLocaleString('en')} active schedules (one workflow each: a \`schedule\` trigger, cron \`${settings.cron}\`, activated through the workflow service by a seeding child before serve starts), all due at the same second each minute, on \`node dist/main.js serve\` (embedded SQLite, defaults but \`SWITCHYARD_API_RATE_LIMIT=10000000\`). Run: \`npm run bench:schedules\` (\`BENCH_SCHEDULES\`, \`BENCH_MINUTES\`).`,
  '',
  `Measured ${result.settings.date} on ${result.machine.cpu} (${result.machine.cores} cores), Node ${result.machine.node}${describeCode(settings.code)}.`,
  `${result.loadAverage.before[0] > result.machine.cores ? '**The machine was busy with other work**: l' : 'L'}oad average (1, 5, 15 min) ${result.loadAverage.before.join(' / ')} before, ${result.loadAverage.during.map((l) => l.join(' / ')).join('; ')} during the measured minutes.`,
  '',
  '- fire-time lag: `fired_at - scheduled_at` of each execution, the moment the scheduler created it for its fire time (the commit follows within the same batch);',
  '- start lag: the execution began running (`started_at - scheduled_at`);',
  '- duplicates: fire times (workflow, scheduled_at) with more than one execution, over every execution in the database.',
  '',
  '| minute | fired | missed | completed | fire lag p50 / p99 / max (ms) | start lag p50 / p99 / max (ms) |',
  '| --- | ---: | ---: | ---: | --- | --- |',
  ...result.minutes.map(
    (m) =>
      `| ${m.minute} | ${m.fired} | ${m.missed} | ${m.completed} | ${m.fireLagMs ? `${m.fireLagMs.p50} / ${m.fireLagMs.p99} / ${m.fireLagMs.max}` : '-'} | ${m.startLagMs ? `${m.startLagMs.p50} / ${m.startLagMs.p99} / ${m.startLagMs.max}` : '-'} |`,
  ),
  '',
  `**Fire-time lag p99: ${result.fireLagMs?.p99 ?? '-'} ms** (target <= ${target} ms: ${result.fireLagMs && result.fireLagMs.p99 <= target ? 'met' : 'NOT met'}); **duplicates: ${result.duplicates}** (target 0). Activating them (workflow service, before serve started) took ${result.setupSeconds} s; ${result.firesOutsideMeasuredMinutes} executions fired outside the measured minutes (during and just after setup).`,
  '',
];
fs.writeFileSync(path.join(here, 'results', 'schedules.json'), `${JSON.stringify(result, null, 2)}\n`);
fs.writeFileSync(path.join(here, 'results', 'schedules.md'), `${lines.join('\n')}\n`);
log(lines.join('\n'));
