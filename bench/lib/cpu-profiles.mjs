// BENCH_CPU_PROF=1: every server child runs under `node --cpu-prof`, one profile per thread (the
// code step's worker threads write their own). Node names them
// `CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile`; one fixed --cpu-prof-name would have
// the workers overwrite the main thread's, so each child writes into a directory of its own, and
// after it exits its files are renamed to `<target>.cpuprofile` (main thread) and
// `<target>-worker-<thread id>.cpuprofile`, each with a text summary beside it (`<name>.txt`,
// committed; the .cpuprofile files are git-ignored).
import fs from 'node:fs';
import path from 'node:path';
import { summarizeProfile, busyTimeline } from './cpu-profile-summary.mjs';

const NODE_NAME = /^CPU\.\d+\.\d+\.\d+\.(\d+)\.\d+\.cpuprofile$/;
const SUMMARY_TOP = 40;

/** The flags for one child, and the directory its threads write into (created here). */
export function cpuProfileFlags(profileDir, name) {
  const threadDir = path.join(path.resolve(profileDir), `.${name}-threads`);
  fs.rmSync(threadDir, { recursive: true, force: true });
  fs.mkdirSync(threadDir, { recursive: true });
  return { flags: ['--cpu-prof', `--cpu-prof-dir=${threadDir}`], threadDir };
}

/**
 * After the child exited: names its profiles after `name` in `profileDir`, writes a summary of
 * each, removes the thread directory, and returns the profiles' paths (main thread first).
 * `spans` (`[from, to]` µs of the monotonic clock, see lib/hrtime.mjs): the measured loads; the
 * summary then covers them alone, and the whole profile after.
 */
export function collectCpuProfiles(threadDir, profileDir, name, spans = []) {
  const written = [];
  for (const file of fs.readdirSync(threadDir)) {
    const thread = NODE_NAME.exec(file)?.[1];
    if (thread === undefined) continue;
    const target = path.join(profileDir, thread === '0' ? `${name}.cpuprofile` : `${name}-worker-${thread}.cpuprofile`);
    fs.renameSync(path.join(threadDir, file), target);
    written.push(target);
  }
  fs.rmSync(threadDir, { recursive: true, force: true });
  written.sort((a, b) => a.length - b.length || a.localeCompare(b));
  for (const file of written) writeSummary(file, spans);
  return written;
}

function writeSummary(file, spans) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const name = path.basename(file);
  const section = (title, summary) => ['', `## ${title}: ${summary[0]}`, ...summary.slice(1)];
  const lines = [
    `# ${name}`,
    `Written by the benchmark run; the profile itself: node bench/profile-summary.mjs ${path.relative(process.cwd(), file)} [top] [from-to | timeline].`,
    '',
    'Busy share of the thread per second since the process started:',
    busyTimeline(profile),
    ...(spans.length > 0 ? section('The measured loads only', summarizeProfile(profile, { top: SUMMARY_TOP, spans })) : []),
    ...section('The whole profile (start-up, set-up, warm-ups and drains included)', summarizeProfile(profile, { top: SUMMARY_TOP })),
  ];
  fs.writeFileSync(file.replace(/\.cpuprofile$/, '.txt'), `${lines.join('\n')}\n`);
}
