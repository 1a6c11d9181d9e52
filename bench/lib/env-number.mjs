// The suites' settings from the environment (BENCH_DURATION, BENCH_ROUNDS, ...).

/** A whole number from `process.env[name]`, at least `min`; `fallback` when unset or empty. */
export function wholeNumber(name, fallback, min = 1) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number (at least ${min}), got "${raw}"`);
  return value;
}

/** BENCH_IN_PROCESS=0 leaves out the in-process rows (on by default). */
export const inProcessRows = () => process.env.BENCH_IN_PROCESS !== '0';
