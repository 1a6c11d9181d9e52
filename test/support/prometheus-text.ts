export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

// Values are Go floats (strconv.ParseFloat): NaN and Inf in any case (prom-client writes `Nan`).
const SAMPLE =
  /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?(?:[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|[+-]?[Ii][Nn][Ff]|[Nn][Aa][Nn]))(?: -?[0-9]+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/y;
const COMMENT = /^# (?:HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*|TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (?:counter|gauge|histogram|summary|untyped))$/;

/**
 * Reads the Prometheus text exposition format (0.0.4): every line is empty, a HELP or TYPE
 * comment, or `name{label="value",...} value`. Lines that are none of these are returned apart.
 */
export function parsePrometheusText(text: string): { samples: Sample[]; invalid: string[] } {
  const samples: Sample[] = [];
  const invalid: string[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || COMMENT.test(line)) continue;
    const match = SAMPLE.exec(line);
    const labels: Record<string, string> = {};
    let ok = match !== null;
    if (match?.[2]) {
      LABEL.lastIndex = 0;
      while (LABEL.lastIndex < match[2].length) {
        const label = LABEL.exec(match[2]);
        if (!label) {
          ok = false;
          break;
        }
        labels[label[1]!] = label[2]!.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
      }
    }
    if (!ok || !match) invalid.push(line);
    else samples.push({ name: match[1]!, labels, value: numberOf(match[3]!) });
  }
  return { samples, invalid };
}

/** The value of the one sample named `name` whose labels include `labels` (0 when there is none). */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value ?? 0;
}

function numberOf(text: string): number {
  const lower = text.toLowerCase();
  if (lower === 'nan') return NaN;
  if (lower.endsWith('inf')) return lower.startsWith('-') ? -Infinity : Infinity;
  return Number(text);
}
