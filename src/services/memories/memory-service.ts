import { escapePointerToken } from '../../lib/json-pointer.js';
import { unstorable } from '../../lib/storable-text.js';
import type { Kysely } from 'kysely';
import {
  COMPACTION_MODES,
  MESSAGE_ROLES,
  RECALL_MODES,
  type CompactionMode,
  type Database,
  type MessageRole,
  type RecallMode,
} from '../../db/schema.js';
import { AppError, notFound } from '../../errors/app-error.js';
import type { Clock } from '../../lib/clock.js';
import { isUuid, newId } from '../../lib/ids.js';
import { isPlainObject } from '../../lib/json.js';
import { ConnectionRepository } from '../../store/connection-repository.js';
import { MemoryRepository, type MemoryMessageRow, type MemoryRow, type MemorySessionRow } from '../../store/memory-repository.js';
import {
  DEFAULT_RECALL_TOP_K,
  DEFAULT_THRESHOLD_TOKENS,
  DEFAULT_WINDOW,
  settingsOf,
  type CompactionSettings,
  type RecallSettings,
} from '../../memory/memory-settings.js';
import { lockMemorySessions, lockSession } from '../../memory/session-lock.js';
import { appendMessages } from '../../memory/session-messages.js';
import { promptContext, type PromptContext } from '../../memory/prompt-context.js';
import { readString, rejectUnknown, Violations, type AttributeInput } from '../attribute-input.js';
import type { Actor } from '../workflows/workflow-service.js';

const ATTRIBUTES = ['name', 'window', 'compaction', 'recall'] as const;
export const MAX_SESSION_KEY = 200;
export const MAX_MESSAGE_BYTES = 256 * 1024;

/** Memories: CRUD of their settings, and the sessions' messages (append, read, clear, prompt context). */
export class MemoryService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly onWork: () => void,
  ) {}

  private memories(actor: Actor): MemoryRepository {
    return new MemoryRepository(this.db, actor.workspaceId);
  }

  async get(actor: Actor, id: string): Promise<MemoryRow> {
    const row = isUuid(id) ? await this.memories(actor).find(id) : undefined;
    if (!row) throw notFound('memory');
    return row;
  }

  async session(actor: Actor, memoryId: string, key: string): Promise<{ memory: MemoryRow; session: MemorySessionRow }> {
    const memory = await this.get(actor, memoryId);
    // A key PostgreSQL cannot hold (NUL) names no session: the same 404 on both dialects, not its 500.
    const session = unstorable(key) === null ? await this.memories(actor).findSession(memory.id, key) : undefined;
    if (!session) throw notFound('session');
    return { memory, session };
  }

  private async readSettings(
    actor: Actor,
    input: AttributeInput,
    violations: Violations,
    current: { window: number; compaction: CompactionSettings; recall: RecallSettings },
  ) {
    let window = current.window;
    if (input.values.window !== undefined) {
      const value = input.values.window;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 1000)
        violations.add(input.pointer('window'), 'window must be a whole number of messages from 1 to 1000');
      else window = value;
    }
    let compaction = current.compaction;
    const rawCompaction = input.values.compaction;
    if (rawCompaction !== undefined) {
      const pointer = input.pointer('compaction');
      if (!isPlainObject(rawCompaction)) violations.add(pointer, 'compaction must be {mode, threshold_tokens, connection_id?, model?}');
      else {
        for (const key of Object.keys(rawCompaction))
          if (!['mode', 'threshold_tokens', 'connection_id', 'model'].includes(key))
            violations.add(
              `${pointer}/${escapePointerToken(key)}`,
              `${key} is not a compaction setting (mode, threshold_tokens, connection_id, model)`,
            );
        const mode = rawCompaction.mode ?? 'none';
        if (!COMPACTION_MODES.includes(mode as CompactionMode))
          violations.add(`${pointer}/mode`, `compaction.mode must be one of ${COMPACTION_MODES.join(', ')}`);
        const threshold = rawCompaction.threshold_tokens ?? DEFAULT_THRESHOLD_TOKENS;
        if (typeof threshold !== 'number' || !Number.isInteger(threshold) || threshold < 50 || threshold > 1_000_000)
          violations.add(`${pointer}/threshold_tokens`, 'compaction.threshold_tokens must be a whole number from 50 to 1000000');
        const next: CompactionSettings = { mode: mode as CompactionMode, threshold_tokens: threshold as number };
        if (mode === 'summarize') {
          if (!isUuid(rawCompaction.connection_id))
            violations.add(
              `${pointer}/connection_id`,
              'summarize needs compaction.connection_id: the connection of the model that writes summaries',
            );
          else if (!(await new ConnectionRepository(this.db, actor.workspaceId).find(rawCompaction.connection_id)))
            violations.add(`${pointer}/connection_id`, 'compaction.connection_id names no connection of this workspace');
          else next.connection_id = rawCompaction.connection_id;
          if (typeof rawCompaction.model !== 'string' || rawCompaction.model.trim() === '' || rawCompaction.model.length > 200)
            violations.add(`${pointer}/model`, 'summarize needs compaction.model: the model that writes summaries');
          else next.model = rawCompaction.model.trim();
        } else if (rawCompaction.connection_id !== undefined || rawCompaction.model !== undefined) {
          violations.add(pointer, 'connection_id and model are settings of the summarize mode');
        }
        compaction = next;
      }
    }
    let recall = current.recall;
    const rawRecall = input.values.recall;
    if (rawRecall !== undefined) {
      const pointer = input.pointer('recall');
      if (!isPlainObject(rawRecall)) violations.add(pointer, 'recall must be {mode, top_k}');
      else {
        for (const key of Object.keys(rawRecall))
          if (!['mode', 'top_k'].includes(key))
            violations.add(`${pointer}/${escapePointerToken(key)}`, `${key} is not a recall setting (mode, top_k)`);
        const mode = rawRecall.mode ?? 'none';
        if (!RECALL_MODES.includes(mode as RecallMode))
          violations.add(`${pointer}/mode`, `recall.mode must be one of ${RECALL_MODES.join(', ')}`);
        const topK = rawRecall.top_k ?? DEFAULT_RECALL_TOP_K;
        if (typeof topK !== 'number' || !Number.isInteger(topK) || topK < 1 || topK > 50)
          violations.add(`${pointer}/top_k`, 'recall.top_k must be a whole number from 1 to 50');
        recall = { mode: mode as RecallMode, top_k: topK as number };
      }
    }
    return { window, compaction, recall };
  }

  async create(actor: Actor, input: AttributeInput): Promise<MemoryRow> {
    const violations = new Violations();
    rejectUnknown(input, ATTRIBUTES, violations, (name) => `${name} is not a memory attribute (${ATTRIBUTES.join(', ')})`);
    const name = readString(input, 'name', violations, { required: true, max: 200 });
    const settings = await this.readSettings(actor, input, violations, {
      window: DEFAULT_WINDOW,
      compaction: { mode: 'none', threshold_tokens: DEFAULT_THRESHOLD_TOKENS },
      recall: { mode: 'none', top_k: DEFAULT_RECALL_TOP_K },
    });
    violations.throwIfAny();
    const now = this.clock.now();
    const row: MemoryRow = {
      id: newId(),
      workspace_id: actor.workspaceId,
      name: name!,
      window: settings.window,
      compaction: JSON.stringify(settings.compaction),
      recall: JSON.stringify(settings.recall),
      created_at: now,
      updated_at: now,
    };
    await this.memories(actor).insert(row);
    return row;
  }

  /** New settings apply from the next message on; stored messages stay as they are. */
  async update(actor: Actor, id: string, input: AttributeInput): Promise<MemoryRow> {
    const current = await this.get(actor, id);
    const violations = new Violations();
    rejectUnknown(input, ATTRIBUTES, violations, (name) => `${name} is not a memory attribute (${ATTRIBUTES.join(', ')})`);
    const name = readString(input, 'name', violations, { max: 200 });
    if (name === '') violations.add(input.pointer('name'), 'name must not be empty');
    const settings = await this.readSettings(actor, input, violations, settingsOf(current));
    violations.throwIfAny();
    const changes: Partial<MemoryRow> = {
      window: settings.window,
      compaction: JSON.stringify(settings.compaction),
      recall: JSON.stringify(settings.recall),
      updated_at: this.clock.now(),
    };
    if (name) changes.name = name;
    await this.memories(actor).update(id, changes);
    return { ...current, ...changes };
  }

  async remove(actor: Actor, id: string): Promise<void> {
    await this.get(actor, id);
    await this.db.transaction().execute(async (trx) => {
      // After the appends and compactions in flight on its sessions (session-lock.ts).
      await lockMemorySessions(trx, actor.workspaceId, id);
      await this.memories(actor).withTransaction(trx).delete(id);
    });
  }

  /** `POST /memories/:id/sessions/:key/messages` with `{data: {role, content}}`. */
  async append(
    actor: Actor,
    memoryId: string,
    key: string,
    data: Record<string, unknown>,
  ): Promise<{ message: MemoryMessageRow; session: MemorySessionRow }> {
    const memory = await this.get(actor, memoryId);
    const violations = new Violations();
    if (key.length === 0 || key.length > MAX_SESSION_KEY)
      throw new AppError('bad_request', `a session key has 1 to ${MAX_SESSION_KEY} characters`, { parameter: 'key' });
    const keyProblem = unstorable(key);
    if (keyProblem) throw new AppError('bad_request', `a session key cannot be stored: it ${keyProblem}`, { parameter: 'key' });
    for (const name of Object.keys(data))
      if (name !== 'role' && name !== 'content')
        violations.add(`/data/${escapePointerToken(name)}`, `${name} is not a message member (role, content)`);
    if (!MESSAGE_ROLES.includes(data.role as MessageRole)) violations.add('/data/role', `role must be one of ${MESSAGE_ROLES.join(', ')}`);
    if (typeof data.content !== 'string') violations.add('/data/content', 'content must be a string');
    else if (Buffer.byteLength(data.content) > MAX_MESSAGE_BYTES)
      violations.add('/data/content', `content must be at most ${MAX_MESSAGE_BYTES} bytes`);
    violations.throwIfAny();
    const result = await this.db
      .transaction()
      .execute((trx) =>
        appendMessages(trx, this.clock, memory, key, [{ role: data.role as MessageRole, content: data.content as string }]),
      );
    if (result.compactionDue) this.onWork();
    return { message: result.messages[0]!, session: result.session };
  }

  /** Clears a session: its messages and the session itself. */
  async clear(actor: Actor, memoryId: string, key: string): Promise<void> {
    const { session } = await this.session(actor, memoryId, key);
    await this.db.transaction().execute(async (trx) => {
      // Under the session's lock (session-lock.ts): an append in flight commits first and its
      // messages go too; deleting the messages under it could deadlock with its window updates.
      if (await lockSession(trx, actor.workspaceId, session.id)) await this.memories(actor).withTransaction(trx).deleteSession(session.id);
    });
  }

  async context(actor: Actor, memoryId: string, key: string, query: string | undefined): Promise<PromptContext> {
    const { memory } = await this.session(actor, memoryId, key);
    return promptContext(this.db, memory, key, query);
  }
}
