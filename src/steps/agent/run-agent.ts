import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ChatMessage, ChatResponse, ToolCall } from '../../ai/chat-types.js';
import { ProviderError } from '../../ai/provider-error.js';
import { DEFAULT_PROVIDER_RETRY, retryProviderCall, systemRetryWaits } from '../../ai/provider-retry.js';
import { NonRetriableError } from '../../engine/step-errors.js';
import { newId } from '../../lib/ids.js';
import { isPlainObject } from '../../lib/json.js';
import type { StepRunContext, StepRuntime } from '../step-runtime.js';
import type { JournalEntry, StepJournal } from '../step-journal.js';
import type { AgentResources } from './agent-resources.js';
import { fixRequest, openingMessages, parseJsonAnswer } from './agent-prompt.js';
import { buildTools, checkAgainst, checkCall, runDirectTool, type AgentTool, type ToolOutcome } from './agent-tools.js';
import { AGENT_DEFAULT_MAX_TURNS } from './index.js';
import { approveToolCall } from './tool-approval.js';

/** One tool call as the step's output lists it. */
interface ToolCallRecord {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  result: unknown;
  is_error: boolean;
  turn: number;
}

/** A journal that lives only for the call (a runtime run outside the engine, as in unit tests). */
function transientJournal(): StepJournal {
  return { load: async () => [], record: async () => {} };
}

const required = (value: unknown, field: string, what: string): string => {
  if (typeof value === 'string' && value.trim() !== '') return value;
  throw new NonRetriableError(`config.${field} is not set: ${what}`, { code: `${field}_required` });
};

/**
 * The agent step: model turn -> tool calls -> results back -> … until the model answers
 * without tools. Durable: each model turn and each tool call is journaled as it completes, and
 * a resumed attempt replays the journal instead of asking again (a workflow tool's child is
 * journaled before it starts, so a resume waits for the same child). A model call that fails
 * retryably (429, 5xx, time-out, connection) is tried again inside the attempt, 3 tries in all
 * (ai/provider-retry.ts), unless the node has a retry policy of its own; what fails uses the
 * engine's vocabulary (a 429 with Retry-After is a RetryAfterError for the node's retry policy).
 * Tool problems go back to the model as tool errors.
 */
/** With a node `retry` policy: one try per attempt, the policy retries. */
const ONE_TRY = Object.freeze(Object.assign({}, DEFAULT_PROVIDER_RETRY, { maxAttempts: 1 }));

export const runAgent: StepRuntime = async (context) => {
  const { config, execution } = context;
  const resources = context.agent;
  if (!resources) throw new NonRetriableError('the agent step needs the engine of a running service', { code: 'not_available' });
  const connectionId = required(
    config.connection_id,
    'connection_id',
    'choose a connection (OpenAI, Anthropic or an OpenAI-compatible server)',
  );
  const model = required(config.model, 'model', 'name the model that answers');
  const prompt = required(config.prompt, 'prompt', 'write the message for the model');
  const maxTurns = typeof config.max_turns === 'number' ? config.max_turns : AGENT_DEFAULT_MAX_TURNS;
  const schema = isPlainObject(config.response_format) ? (config.response_format as Record<string, unknown>) : null;
  const memoryId = typeof config.memory_id === 'string' ? config.memory_id : null;
  const sessionKey =
    memoryId === null
      ? null
      : required(config.session_key, 'session_key', 'name the conversation of the memory, e.g. {{ trigger.body.chat_id }}');

  const journal = context.journal ?? transientJournal();
  const entries = await journal.load();
  const modelTurns = new Map<number, JournalEntry>();
  const toolRuns = new Map<string, JournalEntry>();
  for (const entry of entries) {
    if (entry.kind === 'model_call' && entry.status === 'completed') modelTurns.set(entry.turn, entry);
    else if (entry.kind === 'tool_call') toolRuns.set(`${entry.turn}/${String(entry.data.call_id)}`, entry);
  }

  const tools = await buildTools(config, resources, execution.workspaceId);
  const memory = memoryId === null ? null : await resources.memoryContext(execution.workspaceId, memoryId, sessionKey!, prompt);
  const opening = openingMessages(typeof config.system === 'string' ? config.system : undefined, memory, prompt);
  const messages: ChatMessage[] = opening.messages;
  const calls: ToolCallRecord[] = [];
  const usage = { input_tokens: 0, output_tokens: 0 };
  let fixAsked = false;

  for (let turn = 0; turn < maxTurns + (fixAsked ? 1 : 0); turn++) {
    const answer = await modelTurn(context, resources, journal, modelTurns.get(turn), turn, connectionId, {
      model,
      system: opening.system,
      messages,
      tools: tools.map((t) => t.spec),
      temperature: typeof config.temperature === 'number' ? config.temperature : undefined,
      maxTokens: typeof config.max_tokens === 'number' ? config.max_tokens : undefined,
      jsonSchema: schema ?? undefined,
    });
    usage.input_tokens += answer.usage.input_tokens;
    usage.output_tokens += answer.usage.output_tokens;

    if (answer.toolCalls.length > 0) {
      messages.push({ role: 'assistant', content: answer.text, toolCalls: answer.toolCalls });
      for (const call of answer.toolCalls) {
        const outcome = await toolCall(context, resources, journal, tools, toolRuns.get(`${turn}/${call.id}`), turn, call);
        calls.push({ id: call.id, name: call.name, arguments: call.arguments, result: outcome.result, is_error: outcome.isError, turn });
        messages.push({
          role: 'tool',
          toolCallId: call.id,
          name: call.name,
          // A tool error given as text (a rejected approval) reaches the model as that text.
          content: outcome.isError && typeof outcome.result === 'string' ? outcome.result : JSON.stringify(outcome.result ?? null),
          ...(outcome.isError ? { isError: true } : {}),
        });
      }
      continue;
    }

    let json: unknown = null;
    if (schema) {
      const parsed = parseJsonAnswer(answer.text);
      const problem = 'error' in parsed ? parsed.error : checkAgainst(schema, parsed.value);
      if (problem !== null) {
        if (!fixAsked) {
          fixAsked = true;
          messages.push({ role: 'assistant', content: answer.text }, { role: 'user', content: fixRequest(problem) });
          continue;
        }
        throw new NonRetriableError(`the model's answer does not match response_format after one request to fix it: ${problem}`, {
          code: 'invalid_response',
          details: { text: answer.text.slice(0, 2000) },
        });
      }
      json = (parsed as { value: unknown }).value;
    }
    const output = { text: answer.text, json, tool_calls: calls, usage, model: answer.model, stop_reason: answer.stopReason };
    const exchange = [
      { role: 'user' as const, content: prompt },
      { role: 'assistant' as const, content: answer.text },
    ];
    return {
      output,
      metrics: { kind: 'agent', provider: answer.provider },
      // The exchange joins the session in the commit that records the step completed: exactly once.
      ...(memoryId !== null
        ? {
            effect: async (trx: Transaction<Database>) => {
              await resources.appendMemory(trx, execution.workspaceId, memoryId, sessionKey!, exchange);
              return output;
            },
          }
        : {}),
    };
  }
  throw new NonRetriableError(`the model was still calling tools after max_turns (${maxTurns}) turns`, {
    code: 'max_turns_exceeded',
    details: { max_turns: maxTurns, tool_calls: calls.length },
  });
};

type Answer = ChatResponse & { provider: string };

/** A model turn: replayed from the journal, or asked and journaled as soon as it answers. */
async function modelTurn(
  context: StepRunContext,
  resources: AgentResources,
  journal: StepJournal,
  done: JournalEntry | undefined,
  turn: number,
  connectionId: string,
  request: Parameters<AgentResources['chat']>[2],
): Promise<Answer> {
  if (done) {
    const d = done.data as {
      text: string;
      tool_calls: ToolCall[];
      usage: Answer['usage'];
      model: string;
      stop_reason: Answer['stopReason'];
    };
    return {
      text: d.text,
      toolCalls: d.tool_calls,
      usage: d.usage,
      model: d.model,
      stopReason: d.stop_reason,
      provider: done.provider ?? '',
    };
  }
  const startedAt = context.clock.now();
  const startedMs = context.clock.nowMs();
  // Retried here, inside the attempt, rather than as attempts of the node: the engine retries a
  // node only under its `retry` policy, and a failed model call has no effect that a crash could
  // repeat, so its tries need no row of their own. What each one was is kept instead: on the
  // turn's journal row once it answers, in the step's error (`details.retries`) if it never does.
  // The waits are bounded (60 s in all) and end at once on a cancel or the engine's stop.
  const retries: Record<string, unknown>[] = [];
  let answer: Answer;
  try {
    answer = await retryProviderCall(() => resources.chat(context.execution.workspaceId, connectionId, request, context.cancel.signal), {
      waits: systemRetryWaits,
      cancel: context.cancel,
      // The node's own policy overrides the default tries: each failure is then one of its attempts.
      policy: context.nodeRetryPolicy ? ONE_TRY : DEFAULT_PROVIDER_RETRY,
      onRetry: ({ attempt, error, waitMs }) =>
        retries.push({ attempt, code: error.code, status: error.status, retry_after_ms: error.retryAfterMs, waited_ms: waitMs }),
    });
  } catch (error) {
    if (error instanceof ProviderError) throw error.toStepError(retries.length > 0 ? { attempts: retries.length + 1, retries } : {});
    throw error;
  }
  await journal.record({
    id: newId(),
    kind: 'model_call',
    turn,
    status: 'completed',
    provider: answer.provider,
    startedAt,
    durationMs: Math.max(0, context.clock.nowMs() - startedMs),
    childExecutionId: null,
    data: {
      text: answer.text,
      tool_calls: answer.toolCalls,
      usage: answer.usage,
      model: answer.model,
      stop_reason: answer.stopReason,
      ...(retries.length > 0 ? { retries } : {}),
    },
  });
  return answer;
}

/** A tool call: replayed from the journal, or run and journaled (a workflow tool also before its child starts). */
async function toolCall(
  context: StepRunContext,
  resources: AgentResources,
  journal: StepJournal,
  tools: AgentTool[],
  done: JournalEntry | undefined,
  turn: number,
  call: ToolCall,
): Promise<ToolOutcome> {
  if (done?.status === 'completed') return { result: done.data.result, isError: done.data.is_error === true };
  const checked = await checkCall(tools, call);
  const tool = 'tool' in checked ? checked.tool : null;
  const startedAt = done?.startedAt ?? context.clock.now();
  const startedMs = context.clock.nowMs();
  const entry: JournalEntry = {
    id: done?.id ?? newId(),
    kind: 'tool_call',
    turn,
    status: 'running',
    provider: tool?.type ?? null,
    startedAt,
    durationMs: null,
    childExecutionId: done?.childExecutionId ?? null,
    data: { call_id: call.id, name: call.name, arguments: call.arguments },
  };
  let outcome: ToolOutcome;
  // A tool that needs a person's approval first: parks the attempt until decided (tool-approval.ts).
  const refused = tool?.configured?.requires_approval ? await approveToolCall(context, journal, entry, tool, call, done) : null;
  if (!tool) outcome = checked as ToolOutcome;
  else if (refused) outcome = refused;
  else if (tool.type === 'workflow') outcome = await workflowTool(context, journal, entry, tool, call, done !== undefined);
  else outcome = await runDirectTool(tool, call, context, resources);
  await journal.record(
    Object.assign(entry, {
      status: 'completed' as const,
      durationMs: Math.max(0, context.clock.nowMs() - startedMs),
      data: Object.assign({}, entry.data, { result: outcome.result, is_error: outcome.isError }),
    }),
  );
  return outcome;
}

/**
 * A workflow tool runs the callee as a child execution. Its id is journaled before the child
 * starts: a resumed attempt finds the entry `running` and waits for the same child (starting
 * it only if it was never committed), so a crash never runs the callee twice.
 */
async function workflowTool(
  context: StepRunContext,
  journal: StepJournal,
  entry: JournalEntry,
  tool: AgentTool,
  call: ToolCall,
  resumed: boolean,
): Promise<ToolOutcome> {
  const calls = context.calls;
  if (!calls) return { isError: true, result: { code: 'not_available', message: 'workflow tools need the engine of a running service' } };
  const workflowId = (tool.configured as { workflow_id: string }).workflow_id;
  const start = async (): Promise<ToolOutcome | null> => {
    try {
      await calls.start({ childId: entry.childExecutionId!, workflowId, input: call.arguments, stepRowId: entry.id });
      return null;
    } catch (error) {
      return {
        isError: true,
        result: {
          code: (error as { code?: string }).code ?? 'tool_failed',
          message: error instanceof Error ? error.message : String(error),
        },
      };
    }
  };
  if (!resumed || entry.childExecutionId === null) {
    entry.childExecutionId = newId();
    await journal.record(entry);
    const failed = await start();
    if (failed) return failed;
  }
  let ended = await calls.wait(entry.childExecutionId);
  if (ended.status === 'missing') {
    const failed = await start();
    if (failed) return failed;
    ended = await calls.wait(entry.childExecutionId);
  }
  if (ended.status === 'completed') return { isError: false, result: ended.output };
  const cause = ended.error as { message?: unknown } | null;
  return {
    isError: true,
    result: {
      code: ended.status === 'cancelled' ? 'child_cancelled' : 'child_failed',
      message: `the workflow ${ended.status === 'cancelled' ? 'was cancelled' : `failed: ${typeof cause?.message === 'string' ? cause.message : 'unknown error'}`}`,
      execution_id: entry.childExecutionId,
    },
  };
}
