// Summarises a V8 .cpuprofile (from BENCH_CPU_PROF=1 npm run bench): self time by function and
// by package/file, and total (inclusive) time of the app's own functions in dist/.
// Usage: node bench/profile-summary.mjs <file.cpuprofile> [top=25] [from-to]
// `from-to` (seconds since the profile started, e.g. 15-22) keeps only the samples in that
// window: a load phase without the set-up and drain around it. `timeline` instead of a window
// prints how busy the thread was in each second, to find the phases.
import fs from 'node:fs';

const [file, topArg = '25', windowArg] = process.argv.slice(2);
if (!file) throw new Error('usage: node bench/profile-summary.mjs <file.cpuprofile> [top] [from-to | timeline]');
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const top = Number(topArg);
const [fromS, toS] = windowArg && windowArg !== 'timeline' ? windowArg.split('-').map(Number) : [0, Infinity];
const nodeById = new Map(profile.nodes.map((node) => [node.id, node]));

// Self time per node: each sample names the node that was running; time deltas follow samples.
const selfUs = new Map();
const busyBySecond = [];
let elapsedUs = 0;
profile.samples.forEach((id, i) => {
  const delta = profile.timeDeltas[i] ?? 0;
  elapsedUs += delta;
  const second = Math.floor(elapsedUs / 1e6);
  busyBySecond[second] ??= { busy: 0, all: 0 };
  busyBySecond[second].all += delta;
  if (nodeById.get(id)?.callFrame.functionName !== '(idle)') busyBySecond[second].busy += delta;
  if (elapsedUs < fromS * 1e6 || elapsedUs >= toS * 1e6) return;
  selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
});
if (windowArg === 'timeline') {
  console.log(`${file}: busy share per second`);
  console.log(busyBySecond.map((b, s) => `${s}s ${b ? Math.round((b.busy / b.all) * 100) : 0}%`).join('  '));
  process.exit(0);
}
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

/** node_modules/<package> or dist/<folder>, else the file name or the V8 category. */
function ownerOf(url) {
  if (!url) return '(native/V8)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const dist = /\/dist\/(.+)$/.exec(url);
  if (dist) return `dist/${dist[1]}`;
  return url.startsWith('node:') ? url : url.split('/').slice(-2).join('/');
}

const isAppCode = (url) => url.includes('/dist/') && !url.includes('/node_modules/');
const keyOf = ({ functionName, url, lineNumber }) => `${functionName || '(anonymous)'}  ${ownerOf(url)}:${lineNumber + 1}`;
const parentOf = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node);

const byFunction = new Map();
const byOwner = new Map();
const inclusive = new Map();
for (const node of profile.nodes) {
  const us = selfUs.get(node.id) ?? 0;
  if (us === 0) continue;
  byFunction.set(keyOf(node.callFrame), (byFunction.get(keyOf(node.callFrame)) ?? 0) + us);
  const owner = ownerOf(node.callFrame.url);
  byOwner.set(owner, (byOwner.get(owner) ?? 0) + us);
  // Every dist/ function on this stack gets the time once, however deep the recursion.
  const seen = new Set();
  for (let at = node; at; at = parentOf.get(at.id)) if (isAppCode(at.callFrame.url)) seen.add(keyOf(at.callFrame));
  for (const key of seen) inclusive.set(key, (inclusive.get(key) ?? 0) + us);
}

const print = (title, map) => {
  console.log(`\n${title}`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}`);
  }
};
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled${windowArg ? ` between ${fromS} s and ${toS} s` : ''}`);
print('Self time by function', byFunction);
print('Self time by package or file', byOwner);
print('Total time (self + callees) of dist/ functions', inclusive);
