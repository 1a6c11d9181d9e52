// Summarises a V8 .cpuprofile as text: self time by function and by package/file, and total
// (inclusive) time of the app's own functions in dist/. Used by bench/profile-summary.mjs (the
// command) and by the suites, which write one summary per profile (cpu-profiles.mjs).

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

const IDLE = '(idle)';

/**
 * Self time per node id of the samples kept, and the busy share per second. A sample is kept
 * when it lies within [fromS, toS) seconds of the profile's start and, if `spans` is given,
 * within one of them: `[from, to]` in microseconds of the monotonic clock, the time base of a
 * profile's `startTime` and of `process.hrtime` in every process of the machine.
 */
function sampleTimes(profile, fromS, toS, spans) {
  const nodeById = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map();
  const busyBySecond = [];
  let elapsedUs = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    elapsedUs += delta;
    const second = Math.floor(elapsedUs / 1e6);
    busyBySecond[second] ??= { busy: 0, all: 0 };
    busyBySecond[second].all += delta;
    if (nodeById.get(id)?.callFrame.functionName !== IDLE) busyBySecond[second].busy += delta;
    if (elapsedUs < fromS * 1e6 || elapsedUs >= toS * 1e6) return;
    const at = profile.startTime + elapsedUs;
    if (spans && !spans.some(([from, to]) => at >= from && at < to)) return;
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
  });
  return { selfUs, busyBySecond };
}

/** How busy the thread was in each second: one line, "0s 12%  1s 80% ...". */
export function busyTimeline(profile) {
  const { busyBySecond } = sampleTimes(profile, 0, Infinity);
  return Array.from(busyBySecond, (b, s) => `${s}s ${b ? Math.round((b.busy / b.all) * 100) : 0}%`).join('  ');
}

/**
 * The summary as lines of text: the `top` entries of each table, as shares of the busy (not
 * idle) time. `window` ([from, to] seconds since the profile started) keeps only the samples in
 * it, e.g. one load phase; `spans` (see sampleTimes) only those inside the spans given.
 */
export function summarizeProfile(profile, { top = 25, window = null, spans = null } = {}) {
  const [fromS, toS] = window ?? [0, Infinity];
  const { selfUs } = sampleTimes(profile, fromS, toS, spans);
  const nodeById = new Map(profile.nodes.map((node) => [node.id, node]));
  const sampled = [...selfUs.values()].reduce((a, b) => a + b, 0);
  for (const id of selfUs.keys()) if (nodeById.get(id)?.callFrame.functionName === IDLE) selfUs.delete(id);
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
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

  const where = [window ? `between ${fromS} s and ${toS} s` : '', spans ? `inside ${spans.length} measured spans` : '']
    .filter(Boolean)
    .join(', ');
  const lines = [
    `${(sampled / 1000).toFixed(0)} ms sampled${where ? ` ${where}` : ''}, ${(total / 1000).toFixed(0)} ms of them busy (${sampled ? ((total / sampled) * 100).toFixed(1) : '0.0'}%); shares below are of the busy time`,
  ];
  const table = (title, map) => {
    lines.push('', title);
    for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      lines.push(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}`);
    }
  };
  table('Self time by function', byFunction);
  table('Self time by package or file', byOwner);
  table('Total time (self + callees) of dist/ functions', inclusive);
  return lines;
}
