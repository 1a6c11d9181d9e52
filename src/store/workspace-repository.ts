import type { Kysely } from 'kysely';
import type { Database, WorkspacesTable } from '../db/schema.js';

export type WorkspaceRow = WorkspacesTable;

export async function insertWorkspace(db: Kysely<Database>, row: WorkspaceRow): Promise<void> {
  await db.insertInto('workspaces').values(row).execute();
}

export async function findWorkspaceBySlug(db: Kysely<Database>, slug: string): Promise<WorkspaceRow | undefined> {
  return db.selectFrom('workspaces').selectAll().where('slug', '=', slug).executeTakeFirst();
}

export async function listWorkspaces(db: Kysely<Database>): Promise<WorkspaceRow[]> {
  return db.selectFrom('workspaces').selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function updateWorkspacePlan(db: Kysely<Database>, id: string, plan: WorkspaceRow['plan'], now: string): Promise<void> {
  await db.updateTable('workspaces').set({ plan, updated_at: now }).where('id', '=', id).execute();
}
