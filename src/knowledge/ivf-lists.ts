/**
 * Inverted-file (IVF) lists for approximate vector search: the vectors of a large base are
 * grouped around `LISTS` centroids (spherical k-means), each group stored as its own sqlite-vec
 * partition, and a query scans only the `PROBES` groups whose centroids are nearest to it.
 *
 * Why: sqlite-vec's k-NN is an exact scan, ~0.27 µs per 256-float vector on the 2-core VM, so
 * ~30 ms at 110,000 chunks, more than a hybrid search may take (25 ms). Scanning 12 of 128 lists
 * reads ~9% of the vectors. The price is recall: a neighbour filed in a list that is not probed
 * is missed (bench/results/knowledge.md measures how often against the exact scan).
 *
 * Lists are trained once a base holds `IVF_MIN_VECTORS` vectors (on an even sample of at most
 * 8,192 of them, 6 iterations, deterministic) and kept as the base grows; a re-embedding trains
 * them afresh. Below the threshold a base is one partition and searched exactly.
 */
export const IVF_MIN_VECTORS = 8192;
export const LISTS = 128;
export const PROBES = 12;
const SAMPLE = 8192;
const ITERATIONS = 6;

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

function normalizeInPlace(vector: Float32Array): void {
  const norm = Math.sqrt(dot(vector, vector));
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! / norm;
}

/** The index of the centroid most similar to `vector`. */
export function nearestList(centroids: Float32Array[], vector: Float32Array): number {
  let best = 0;
  let bestScore = Number.NEGATIVE_INFINITY;
  for (let list = 0; list < centroids.length; list++) {
    const score = dot(centroids[list]!, vector);
    if (score > bestScore) {
      bestScore = score;
      best = list;
    }
  }
  return best;
}

/** The `probes` lists whose centroids are most similar to `query`, best first. */
export function probeLists(centroids: Float32Array[], query: Float32Array, probes = PROBES): number[] {
  return centroids
    .map((centroid, list) => ({ list, score: dot(centroid, query) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, probes)
    .map((entry) => entry.list);
}

/**
 * Spherical k-means: centroids start at evenly spaced samples (deterministic), each iteration
 * assigns every sample to its most similar centroid and moves the centroid to the normalised
 * mean; a list left empty keeps its centroid.
 */
export function trainCentroids(vectors: Float32Array[], lists = LISTS): Float32Array[] {
  const step = Math.max(1, Math.floor(vectors.length / SAMPLE));
  const sample = vectors.filter((_, i) => i % step === 0).slice(0, SAMPLE);
  const count = Math.min(lists, sample.length);
  const centroids = Array.from({ length: count }, (_, i) => Float32Array.from(sample[Math.floor((i * sample.length) / count)]!));
  const dimensions = sample[0]?.length ?? 0;
  for (let iteration = 0; iteration < ITERATIONS; iteration++) {
    const sums = Array.from({ length: count }, () => new Float32Array(dimensions));
    const sizes = new Array<number>(count).fill(0);
    for (const vector of sample) {
      const list = nearestList(centroids, vector);
      const sum = sums[list]!;
      for (let i = 0; i < dimensions; i++) sum[i] = sum[i]! + vector[i]!;
      sizes[list]! += 1;
    }
    for (let list = 0; list < count; list++) {
      if (sizes[list] === 0) continue;
      normalizeInPlace(sums[list]!);
      centroids[list] = sums[list]!;
    }
  }
  return centroids;
}
