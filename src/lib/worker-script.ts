import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface WorkerScript {
  entry: URL | string;
  options: { eval?: boolean; execArgv?: string[] };
}

const scripts = new Map<string, WorkerScript>();

/**
 * How to start the worker thread whose module sits beside `base` as `<name>.js` (built) or
 * `<name>.ts` (sources). Built, the `.js` file is the entry. From sources (vitest, `npm run
 * dev`) a worker gets none of the parent's loader, and Node 20 ignores loader hooks passed as
 * `--import` in a worker's execArgv for its entry and its imports (nodejs/node#47747), so a
 * two-line entry registers tsx (a devDependency) through its API first, then imports the
 * module. No execArgv: an inherited `--import tsx` would register it twice on Nodes where it works.
 */
export function workerScript(base: string, name: string): WorkerScript {
  const built = new URL(`./${name}.js`, base);
  const known = scripts.get(built.href);
  if (known) return known;
  let script: WorkerScript;
  if (existsSync(fileURLToPath(built))) {
    script = { entry: built, options: {} };
  } else {
    const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
    const source = JSON.stringify(new URL(`./${name}.ts`, base).href);
    script = {
      entry: `import(${tsx}).then(({ register }) => { register(); return import(${source}); });`,
      options: { eval: true, execArgv: [] },
    };
  }
  scripts.set(built.href, script);
  return script;
}
