import type { Config } from '../config.js';
import { buildDeps, type Deps } from '../deps.js';
import type { WorkspacePlan } from '../db/schema.js';

type Out = (line: string) => void;

async function withDeps<T>(config: Config, run: (deps: Deps) => Promise<T>): Promise<T> {
  const deps = await buildDeps(config);
  try {
    return await run(deps);
  } finally {
    await deps.close();
  }
}

function table(rows: Record<string, unknown>[], out: Out): void {
  if (rows.length === 0) {
    out('(none)');
    return;
  }
  const keys = Object.keys(rows[0]!);
  const text = (v: unknown) => (v === null || v === undefined ? '-' : Array.isArray(v) ? v.join(',') : String(v));
  const widths = keys.map((k) => Math.max(k.length, ...rows.map((r) => text(r[k]).length)));
  out(keys.map((k, i) => k.padEnd(widths[i]!)).join('  '));
  for (const row of rows) out(keys.map((k, i) => text(row[k]).padEnd(widths[i]!)).join('  '));
}

export async function migrateCommand(config: Config, out: Out): Promise<void> {
  await withDeps(config, async (deps) => out(`database (${deps.dialect.name}) is at the latest migration`));
}

export async function workspaceCreate(
  config: Config,
  options: { name: string; slug: string; plan?: string; json?: boolean },
  out: Out,
): Promise<void> {
  await withDeps(config, async (deps) => {
    const ws = await deps.identity.createWorkspace({
      name: options.name,
      slug: options.slug,
      plan: (options.plan ?? 'free') as WorkspacePlan,
    });
    out(
      options.json
        ? JSON.stringify({ id: ws.id, name: ws.name, slug: ws.slug, plan: ws.plan })
        : `created workspace ${ws.slug} (${ws.plan}) ${ws.id}`,
    );
  });
}

export async function workspaceList(config: Config, options: { json?: boolean }, out: Out): Promise<void> {
  await withDeps(config, async (deps) => {
    const rows = (await deps.identity.listWorkspaces()).map((w) => ({
      id: w.id,
      slug: w.slug,
      name: w.name,
      plan: w.plan,
      created_at: w.created_at,
    }));
    if (options.json) out(JSON.stringify(rows));
    else table(rows, out);
  });
}

export async function tokenCreate(
  config: Config,
  options: { workspace: string; scope: string; expiresIn?: string; name?: string; json?: boolean },
  out: Out,
): Promise<void> {
  await withDeps(config, async (deps) => {
    const created = await deps.identity.createToken({
      workspaceSlug: options.workspace,
      scope: options.scope,
      expiresIn: options.expiresIn,
      name: options.name,
    });
    if (options.json) {
      out(JSON.stringify(created));
    } else {
      out(
        `token ${created.id} for workspace ${created.workspace}, scopes ${created.scopes.join(',')}, expires ${created.expires_at ?? 'never'}`,
      );
      out('shown only this once:');
      out(created.token);
    }
  });
}

export async function tokenList(config: Config, options: { workspace?: string; json?: boolean }, out: Out): Promise<void> {
  await withDeps(config, async (deps) => {
    const rows = await deps.identity.listTokens(options.workspace);
    if (options.json) out(JSON.stringify(rows));
    else
      table(
        rows.map(({ id, prefix, workspace, scopes, expires_at, revoked_at, last_used_at }) => ({
          id,
          prefix,
          workspace,
          scopes,
          expires_at,
          revoked_at,
          last_used_at,
        })),
        out,
      );
  });
}

export async function tokenRevoke(config: Config, id: string, options: { json?: boolean }, out: Out): Promise<void> {
  await withDeps(config, async (deps) => {
    await deps.identity.revokeToken(id);
    out(options.json ? JSON.stringify({ id, revoked: true }) : `revoked token ${id}`);
  });
}
