// Small statistics over arrays of numbers: what the engine benchmarks report.

export const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;

/** The q-quantile (0..1), linearly interpolated between the closest ranks. */
export function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  return sorted[low] + (sorted[high] - sorted[low]) * (at - low);
}

export const median = (values) => quantile(values, 0.5);

/** mean, p50, p90, p99, min and max, rounded to `digits` decimals. */
export function summary(values, digits = 4) {
  const round = (value) => Number(value.toFixed(digits));
  return {
    count: values.length,
    mean: round(mean(values)),
    p50: round(quantile(values, 0.5)),
    p90: round(quantile(values, 0.9)),
    p99: round(quantile(values, 0.99)),
    min: round(Math.min(...values)),
    max: round(Math.max(...values)),
  };
}
