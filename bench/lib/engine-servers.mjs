// The servers of the engine and webhook suites: `switchyard serve` (the judged rows), the
// in-process wiring as an extra (BENCH_IN_PROCESS=0 leaves it out), and the bare node:http and
// Fastify baselines; started together, stopped together, and checked for background errors.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnServe, stopAll } from './spawn-serve.mjs';
import { spawnServer } from './spawn-server.mjs';
import { inProcessRows } from './env-number.mjs';

const servers = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'servers');

/**
 * Both limits on and counting, as in production, but never refusing: the defaults (600 API
 * requests and 6,000 deliveries a minute) would refuse nearly all of a load test.
 */
export const RATE_LIMITS = { SWITCHYARD_API_RATE_LIMIT: '10000000', SWITCHYARD_WEBHOOK_RATE_LIMIT: '10000000' };

export const PROCESSES = {
  serve: '`switchyard serve`, defaults (log level `info`, log to a file), both rate limits at 10,000,000/min',
  'in-process': 'in-process, logger off (not what users run)',
  bare: 'bare baseline',
};

/**
 * Starts them; `id` names the profiles (`<id>`, `<id>-in-process`). Resolves with
 * `{serve, inProcess, baselines: [{id, label, url}], all}`; on a failed start, stops what started.
 */
export async function startEngineServers(id, { profileDir } = {}) {
  const all = [];
  const start = async (starting) => {
    const server = await starting;
    all.push(server);
    return server;
  };
  try {
    const serve = await start(spawnServe({ id, env: RATE_LIMITS, probe: true, profileDir }));
    const inProcess = inProcessRows()
      ? await start(spawnServer(path.join(servers, 'engine-server.mjs'), [], { id: `${id}-in-process`, profileDir, probe: true }))
      : null;
    const nodeHttp = await start(spawnServer(path.join(servers, 'bare-node-http.mjs'), [], { id: 'node-http' }));
    const fastify = await start(spawnServer(path.join(servers, 'bare-fastify.mjs'), [], { id: 'bare' }));
    const baselines = [
      { id: 'node-http', label: 'Bare node:http `GET /` (hello world JSON)', url: `${nodeHttp.baseUrl}/` },
      { id: 'bare', label: 'Bare Fastify 5 `GET /` (hello world)', url: `${fastify.baseUrl}/` },
    ];
    return { serve, inProcess, baselines, all };
  } catch (error) {
    await stopAll(all).catch((stopError) => console.error('ERROR while stopping the servers:', stopError));
    throw error;
  }
}

/**
 * The suites' targets: serve (judged, with the baselines) and the in-process extra, each with
 * its session. `sessionOf(server)` builds the session (engine/session.mjs).
 */
export function targetsOf({ serve, inProcess, baselines }, sessionOf) {
  return [
    { process: 'serve', label: PROCESSES.serve, judged: true, server: serve, session: sessionOf(serve), baselines },
    ...(inProcess
      ? [
          {
            process: 'in-process',
            label: PROCESSES['in-process'],
            judged: false,
            server: inProcess,
            session: sessionOf(inProcess),
            baselines: [],
          },
        ]
      : []),
  ];
}

/**
 * Stops every server (serve must exit 0 on SIGTERM) and returns `{errors, serve: {log,
 * shutdownMs, command}, profiles}`; `errors` counts the serve log's error lines and the
 * in-process engine's background errors (read before it stops), each printed.
 */
export async function stopEngineServers({ serve, inProcess, all }, targets) {
  let errors = 0;
  const inProcessTarget = targets.find((target) => target.process === 'in-process');
  if (inProcess && inProcessTarget) {
    const { backgroundErrors } = await inProcessTarget.session.state();
    if (backgroundErrors > 0) console.error(`ERROR: the in-process engine reported ${backgroundErrors} background errors (see above)`);
    errors += backgroundErrors;
  }
  for (const target of targets) target.session.close();
  const stopped = await stopAll(all);
  const serveStopped = stopped[serve.id];
  if (serveStopped.log.errors > 0)
    console.error(`ERROR: switchyard serve logged ${serveStopped.log.errors} errors, e.g.\n${serveStopped.log.errorSamples.join('\n')}`);
  errors += serveStopped.log.errors;
  return {
    errors,
    serve: { command: serve.command, env: serve.env, log: serveStopped.log, shutdownMs: serveStopped.shutdownMs },
    profiles: Object.values(stopped).flatMap((s) => s.profiles ?? []),
  };
}
