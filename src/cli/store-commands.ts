import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import type { Config } from '../config.js';
import { buildDeps, type Deps } from '../deps.js';
import { AppError } from '../errors/app-error.js';
import { DUMP_FORMATS, type DumpFormat, dumpStream } from '../services/stores/dump/store-dump.js';
import { restoreStore } from '../services/stores/dump/store-restore.js';
import { findWorkspaceBySlug } from '../store/workspace-repository.js';

type Out = (line: string) => void;

export interface StoreIo {
  stdin: Readable;
  stdout: Writable;
  /** Progress lines (stderr): the data goes to stdout, untouched. */
  progress: (line: string) => void;
}

async function withWorkspace<T>(
  config: Config,
  slug: string,
  run: (deps: Deps, workspace: { id: string; owner_user_id: string }) => Promise<T>,
): Promise<T> {
  const deps = await buildDeps(config, { timers: false });
  try {
    const workspace = await findWorkspaceBySlug(deps.db, slug);
    if (!workspace) throw new Error(`workspace "${slug}" not found`);
    return await run(deps, workspace);
  } finally {
    await deps.close();
  }
}

/** A pass-through that counts lines and reports every 100,000 (and the total at the end). */
function lineCounter(label: string, progress: (line: string) => void): Transform {
  let lines = 0;
  let reported = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines += 1;
      if (lines - reported >= 100_000) {
        reported = lines;
        progress(`${label}: ${lines} lines`);
      }
      done(null, chunk);
    },
    flush(done) {
      progress(`${label}: ${lines} lines, done`);
      done();
    },
  });
}

/** `switchyard store dump --workspace S --slug X [--format ndjson|csv|json] > file`. */
export async function storeDump(config: Config, options: { workspace: string; slug: string; format?: string }, io: StoreIo): Promise<void> {
  const format = (options.format ?? 'ndjson') as DumpFormat;
  if (!DUMP_FORMATS.includes(format)) throw new Error(`--format must be one of ${DUMP_FORMATS.join(', ')}`);
  await withWorkspace(config, options.workspace, async (deps, workspace) => {
    const store = await deps.db
      .selectFrom('stores')
      .selectAll()
      .where('workspace_id', '=', workspace.id)
      .where('slug', '=', options.slug)
      .where('deleted_at', 'is', null)
      .where('restoring_until', 'is', null)
      .executeTakeFirst();
    if (!store) throw new Error(`store "${options.slug}" not found in workspace "${options.workspace}"`);
    await pipeline(dumpStream(deps.db, store, format), lineCounter(`dump ${store.slug}`, io.progress), io.stdout, { end: false });
  });
}

/**
 * `switchyard store restore --workspace S --slug Y [--name N] < file`: prints the new store and
 * the report, with the member names of the API's answer's `meta`.
 */
export async function storeRestore(
  config: Config,
  options: { workspace: string; slug: string; name?: string },
  io: StoreIo,
  out: Out,
): Promise<void> {
  await withWorkspace(config, options.workspace, async (deps, workspace) => {
    const input = io.stdin.pipe(lineCounter(`restore ${options.slug}`, io.progress));
    try {
      const actor = { workspaceId: workspace.id, userId: workspace.owner_user_id };
      const request = { slug: options.slug, ...(options.name !== undefined ? { name: options.name } : {}) };
      const { store, meta } = await restoreStore(
        { db: deps.db, dialect: deps.dialect, clock: deps.clock, stores: deps.stores },
        actor,
        request,
        input,
      );
      out(JSON.stringify({ store: { id: store.id, slug: store.slug, name: store.name, row_count: store.row_count }, ...meta }));
    } catch (error) {
      if (error instanceof AppError) throw new Error(`${error.code}: ${error.message}`);
      throw error;
    }
  });
}
