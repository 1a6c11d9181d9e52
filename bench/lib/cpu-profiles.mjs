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
 */
export function collectCpuProfiles(threadDir, profileDir, name) {
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
  for (const file of written) writeSummary(file);
  return written;
}

function writeSummary(file) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const name = path.basename(file);
  const lines = [
    `${name}: ${summarizeProfile(profile, { top: SUMMARY_TOP })[0]}`,
    `(written by the benchmark run; the whole profile, set-up, warm-ups and drains included; the file itself: node bench/profile-summary.mjs ${path.relative(process.cwd(), file)} [top] [from-to | timeline])`,
    '',
    'Busy share of the thread per second:',
    busyTimeline(profile),
    ...summarizeProfile(profile, { top: SUMMARY_TOP }).slice(1),
  ];
  fs.writeFileSync(file.replace(/\.cpuprofile$/, '.txt'), `${lines.join('\n')}\n`);
}
