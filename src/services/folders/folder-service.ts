import type { Kysely } from 'kysely';
import type { Clock } from '../../lib/clock.js';
import { AppError, notFound } from '../../errors/app-error.js';
import { isUuid, newId } from '../../lib/ids.js';
import type { Database } from '../../db/schema.js';
import { FolderRepository, type FolderRow } from '../../store/folder-repository.js';
import { WorkflowRepository } from '../../store/workflow-repository.js';
import { POSITION_STEP } from '../../lib/positions.js';
import { placeAmong } from '../ordering.js';
import { readString, rejectUnknown, Violations, type AttributeInput } from '../attribute-input.js';
import type { Actor } from '../workflows/workflow-service.js';

/** Folders are one level deep: a folder's parent must itself be at the root. */
export class FolderService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  private folders(actor: Actor): FolderRepository {
    return new FolderRepository(this.db, actor.workspaceId);
  }

  async get(actor: Actor, id: string): Promise<FolderRow> {
    const row = isUuid(id) ? await this.folders(actor).find(id) : undefined;
    if (!row) throw notFound('folder');
    return row;
  }

  /** Checks a wanted parent: it must exist here, sit at the root, and not be the folder itself. */
  private async checkParent(actor: Actor, parentId: unknown, pointer: string, self?: FolderRow): Promise<string | null> {
    if (parentId === null || parentId === undefined) return null;
    if (!isUuid(parentId)) throw new AppError('validation_failed', 'parent_id must be a folder id or null', { pointer });
    if (self && parentId === self.id) throw new AppError('validation_failed', 'a folder cannot be its own parent', { pointer });
    const parent = await this.folders(actor).find(parentId);
    if (!parent) throw new AppError('validation_failed', 'parent_id names no folder of this workspace', { pointer });
    if (parent.parent_id !== null)
      throw new AppError('validation_failed', 'folders are one level deep: the parent is itself inside a folder', { pointer });
    if (self && (await this.folders(actor).countChildren(self.id)) > 0) {
      throw new AppError(
        'validation_failed',
        'folders are one level deep: this folder has subfolders, so it cannot move into another folder',
        { pointer },
      );
    }
    return parentId;
  }

  async create(actor: Actor, input: AttributeInput): Promise<FolderRow> {
    const violations = new Violations();
    rejectUnknown(input, ['name', 'parent_id'], violations, (name) => `${name} is not a folder attribute (name, parent_id)`);
    const name = readString(input, 'name', violations, { required: true, max: 200 });
    violations.throwIfAny();
    const parentId = await this.checkParent(actor, input.values.parent_id, input.pointer('parent_id'));
    const siblings = await this.folders(actor).listSiblingPositions(parentId);
    const now = this.clock.now();
    const row: FolderRow = {
      id: newId(),
      workspace_id: actor.workspaceId,
      parent_id: parentId,
      name: name!,
      position: (siblings.at(-1)?.position ?? 0) + POSITION_STEP,
      created_at: now,
      updated_at: now,
    };
    await this.folders(actor).insert(row);
    return row;
  }

  async rename(actor: Actor, id: string, input: AttributeInput): Promise<FolderRow> {
    const current = await this.get(actor, id);
    const violations = new Violations();
    rejectUnknown(
      input,
      ['name'],
      violations,
      (name) => `${name} cannot be changed here: PATCH renames; reorder moves (PATCH /folders/:id/reorder)`,
    );
    const name = readString(input, 'name', violations, { required: false, max: 200 });
    if (name === '') violations.add(input.pointer('name'), 'name must not be empty');
    violations.throwIfAny();
    const changes = { ...(name ? { name } : {}), updated_at: this.clock.now() };
    await this.folders(actor).update(id, changes);
    return { ...current, ...changes };
  }

  /** Deletes a folder; its workflows and its subfolders move to the root, in one transaction. */
  async remove(actor: Actor, id: string): Promise<void> {
    await this.get(actor, id);
    const now = this.clock.now();
    await this.db.transaction().execute(async (trx) => {
      await new WorkflowRepository(trx, actor.workspaceId).moveFolderContentsToRoot(id, now);
      const folders = this.folders(actor).withTransaction(trx);
      await folders.moveChildrenToRoot(id, now);
      await folders.delete(id);
    });
  }

  async reorder(actor: Actor, id: string, input: AttributeInput): Promise<FolderRow> {
    const current = await this.get(actor, id);
    const violations = new Violations();
    rejectUnknown(
      input,
      ['before_id', 'after_id', 'position', 'parent_id'],
      violations,
      (name) => `${name} is not a reorder attribute (before_id, after_id, position, parent_id)`,
    );
    for (const field of ['before_id', 'after_id'] as const) {
      const value = input.values[field];
      if (value !== undefined && value !== null && !isUuid(value))
        violations.add(input.pointer(field), `${field} must be a folder id or null`);
    }
    const rawPosition = input.values.position;
    if (rawPosition !== undefined && (typeof rawPosition !== 'number' || !Number.isFinite(rawPosition)))
      violations.add(input.pointer('position'), 'position must be a finite number');
    if (rawPosition !== undefined && (input.values.before_id || input.values.after_id))
      violations.add(input.pointer('position'), 'give position or before_id/after_id, not both');
    if (input.values.before_id && input.values.after_id) violations.add(input.pointer('after_id'), 'give before_id or after_id, not both');
    violations.throwIfAny();

    const parentId =
      input.values.parent_id === undefined
        ? current.parent_id
        : await this.checkParent(actor, input.values.parent_id, input.pointer('parent_id'), current);
    const now = this.clock.now();
    return this.db.transaction().execute(async (trx) => {
      const folders = this.folders(actor).withTransaction(trx);
      let position: number;
      if (typeof rawPosition === 'number') {
        position = rawPosition;
      } else {
        const siblings = await folders.listSiblingPositions(parentId);
        const placement = placeAmong(
          siblings,
          id,
          { beforeId: input.values.before_id as string | null, afterId: input.values.after_id as string | null },
          input.pointer,
        );
        for (const item of placement.renumbered ?? []) if (item.id !== id) await folders.update(item.id, { position: item.position });
        position = placement.position;
      }
      await folders.update(id, { parent_id: parentId, position, updated_at: now });
      return { ...current, parent_id: parentId, position, updated_at: now };
    });
  }
}
