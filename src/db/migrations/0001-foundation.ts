import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect/dialect.js';

/** Identity, tokens, folders, workflows and their activation snapshots. */
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  const text = dialect.textType;
  await db.schema
    .createTable('users')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('email', text, (c) => c.notNull().unique())
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('workspaces')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('slug', text, (c) => c.notNull().unique())
    .addColumn('plan', text, (c) => c.notNull())
    .addColumn('owner_user_id', text, (c) => c.notNull().references('users.id'))
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_tokens')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('workspace_id', text, (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('user_id', text, (c) => c.notNull().references('users.id'))
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('token_prefix', text, (c) => c.notNull())
    .addColumn('token_hash', text, (c) => c.notNull().unique())
    .addColumn('scope', text, (c) => c.notNull())
    .addColumn('expires_at', text)
    .addColumn('revoked_at', text)
    .addColumn('last_used_at', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('api_tokens_prefix_idx').on('api_tokens').column('token_prefix').execute();
  await db.schema.createIndex('api_tokens_workspace_idx').on('api_tokens').columns(['workspace_id', 'created_at']).execute();

  await db.schema
    .createTable('workflow_folders')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('workspace_id', text, (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('parent_id', text, (c) => c.references('workflow_folders.id'))
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('position', dialect.doubleType, (c) => c.notNull())
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('workflow_folders_workspace_idx')
    .on('workflow_folders')
    .columns(['workspace_id', 'parent_id', 'position'])
    .execute();

  await db.schema
    .createTable('workflows')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('workspace_id', text, (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('user_id', text, (c) => c.notNull().references('users.id'))
    .addColumn('folder_id', text, (c) => c.references('workflow_folders.id'))
    .addColumn('position', dialect.doubleType, (c) => c.notNull())
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('description', text)
    .addColumn('status', text, (c) => c.notNull())
    .addColumn('ai_auto_probe', dialect.booleanType, (c) => c.notNull())
    .addColumn('build_mode', text, (c) => c.notNull())
    .addColumn('build_prompt', text)
    .addColumn('graph', text, (c) => c.notNull())
    .addColumn('active_snapshot_id', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute();
  // The default list order (newest first) walks this index backwards.
  await db.schema.createIndex('workflows_workspace_created_idx').on('workflows').columns(['workspace_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('workflows_folder_idx').on('workflows').columns(['workspace_id', 'folder_id', 'position']).execute();

  await db.schema
    .createTable('workflow_snapshots')
    .addColumn('id', text, (c) => c.primaryKey())
    .addColumn('workspace_id', text, (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('workflow_id', text, (c) => c.notNull())
    .addColumn('graph', text, (c) => c.notNull())
    .addColumn('created_by', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('workflow_snapshots_workflow_idx').on('workflow_snapshots').columns(['workflow_id', 'created_at']).execute();
}
