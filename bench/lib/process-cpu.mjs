// CPU time of processes, read from /proc (Linux): what each part of a setup spends per delivery,
// beside the latency figures. Elsewhere every reading is null and the figures say n/a.
import fs from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** User + system CPU time of one process (all its threads) so far, in ms; null where /proc is missing. */
export function processCpuMs(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return null;
  }
}

/** The CPU time of several processes together, in ms; null when any cannot be read. */
export function sumCpu(pids) {
  let total = 0;
  for (const pid of pids) {
    const ms = processCpuMs(pid);
    if (ms === null) return null;
    total += ms;
  }
  return total;
}

/**
 * The CPU time of every PostgreSQL server process on this machine (backends, WAL writer, ...), in
 * ms by pid (a backend that ends between two readings drops out instead of making the difference
 * negative); null where /proc is missing.
 */
export function postgresCpuMs() {
  let dirs;
  try {
    dirs = fs.readdirSync('/proc');
  } catch {
    return null;
  }
  const byPid = new Map();
  for (const dir of dirs) {
    if (!/^\d+$/.test(dir)) continue;
    try {
      if (fs.readFileSync(`/proc/${dir}/stat`, 'utf8').includes('(postgres)')) byPid.set(dir, processCpuMs(dir) ?? 0);
    } catch {
      // A process that ended while it was read.
    }
  }
  return byPid;
}

/** `end - start` of two readings: numbers, or maps by pid (the processes of `end`, each from 0 if it started since). */
function spent(start, end) {
  if (!(end instanceof Map)) return end - start;
  let total = 0;
  for (const [pid, ms] of end) total += ms - (start.get(pid) ?? 0);
  return total;
}

/**
 * Runs `run` and answers `{result, perDeliveryMs}`: each part's CPU time (`parts`: name -> a
 * reading in ms, or in ms by pid) and this process's own (the load generator) over the run, divided by
 * `deliveries(result)`. A part whose reading is null is left out.
 */
export async function cpuPerDelivery(parts, run, deliveries) {
  const before = Object.entries(parts).map(([name, read]) => [name, read, read()]);
  const ownBefore = process.cpuUsage();
  const result = await run();
  const own = process.cpuUsage(ownBefore);
  const count = deliveries(result);
  const perDeliveryMs = {};
  for (const [name, read, start] of before) {
    const end = read();
    if (start !== null && end !== null && count > 0) perDeliveryMs[name] = Math.round((spent(start, end) / count) * 1000) / 1000;
  }
  if (count > 0) perDeliveryMs.loadGenerator = Math.round(((own.user + own.system) / 1000 / count) * 1000) / 1000;
  return { result, perDeliveryMs };
}
