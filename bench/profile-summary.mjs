// Summarises a V8 .cpuprofile (from BENCH_CPU_PROF=1): self time by function and by
// package/file, and total (inclusive) time of the app's own functions in dist/.
// Usage: node bench/profile-summary.mjs <file.cpuprofile> [top=25] [from-to | timeline]
// `from-to` (seconds since the profile started, e.g. 15-22) keeps only the samples in that
// window: a load phase without the set-up and drain around it. `timeline` instead of a window
// prints how busy the thread was in each second, to find the phases.
import fs from 'node:fs';
import { busyTimeline, summarizeProfile } from './lib/cpu-profile-summary.mjs';

const [file, topArg = '25', windowArg] = process.argv.slice(2);
if (!file) throw new Error('usage: node bench/profile-summary.mjs <file.cpuprofile> [top] [from-to | timeline]');
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
if (windowArg === 'timeline') {
  console.log(`${file}: busy share per second`);
  console.log(busyTimeline(profile));
} else {
  const window = windowArg ? windowArg.split('-').map(Number) : null;
  const [first, ...rest] = summarizeProfile(profile, { top: Number(topArg), window });
  console.log(`${file}: ${first}`);
  for (const line of rest) console.log(line);
}
