import type { Config } from '../config.js';
import { buildDeps } from '../deps.js';
import { AppError } from '../errors/app-error.js';
import { findWorkspaceBySlug } from '../store/workspace-repository.js';

type Out = (line: string) => void;

/**
 * `switchyard workflow export --workspace S --id ID`: the same `service/v1` document as
 * `GET /api/v1/workflows/:id/export`, on one line (or indented with --pretty), on stdout.
 */
export async function workflowExport(
  config: Config,
  options: { workspace: string; id: string; pretty?: boolean },
  out: Out,
): Promise<void> {
  const deps = await buildDeps(config, { timers: false });
  try {
    const workspace = await findWorkspaceBySlug(deps.db, options.workspace);
    if (!workspace) throw new Error(`workspace "${options.workspace}" not found`);
    const document = await deps.exports.exportWorkflow({ workspaceId: workspace.id }, options.id).catch((error: unknown) => {
      throw error instanceof AppError ? new Error(`workflow ${options.id} not found in workspace "${options.workspace}"`) : error;
    });
    out(options.pretty ? JSON.stringify(document, null, 2) : JSON.stringify(document));
  } finally {
    await deps.close();
  }
}
