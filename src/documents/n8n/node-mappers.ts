import type { MapResult, NodeContext } from './map-context.js';
import { mapAgent } from './map-agent.js';
import { mapIf, mapSwitch } from './map-branching.js';
import { mapCode } from './map-code.js';
import { mapDataTable } from './map-data-table.js';
import { mapExecuteWorkflow } from './map-execute-workflow.js';
import { mapHttpRequest } from './map-http.js';
import { mapMerge, mapSplitInBatches } from './map-merge-loop.js';
import { mapSchedule } from './map-schedule.js';
import { mapSet } from './map-set.js';
import { mapExecuteWorkflowTrigger, mapManualTrigger, mapNoOp, mapStopAndError, mapWait } from './map-simple-nodes.js';
import { mapRespondToWebhook, mapWebhook } from './map-webhook-nodes.js';

/** What a mapper gets beyond its node: the JavaScript reading its n8n input, and who feeds its inputs. */
export interface MapperExtras {
  /** For code: the node's n8n input read from the step's `input`. */
  inputExpression: string;
  /** Switchyard ids of the nodes feeding each n8n input index (for Merge). */
  inputs: string[][];
}

type Mapper = (ctx: NodeContext, extras: MapperExtras) => MapResult;

const BASE = 'n8n-nodes-base.';
const LANGCHAIN = '@n8n/n8n-nodes-langchain.';

/** n8n node types (package included) -> mapper. Any other type becomes a placeholder. */
const MAPPERS: Record<string, Mapper> = {
  [`${BASE}manualTrigger`]: () => mapManualTrigger(),
  [`${BASE}start`]: () => mapManualTrigger(),
  [`${BASE}executeWorkflowTrigger`]: (ctx) => mapExecuteWorkflowTrigger(ctx),
  [`${BASE}webhook`]: (ctx) => mapWebhook(ctx),
  [`${BASE}respondToWebhook`]: (ctx) => mapRespondToWebhook(ctx),
  [`${BASE}httpRequest`]: (ctx) => mapHttpRequest(ctx),
  [`${BASE}code`]: (ctx, extras) => mapCode(ctx, extras.inputExpression),
  [`${BASE}function`]: (ctx, extras) => mapCode(ctx, extras.inputExpression),
  [`${BASE}functionItem`]: (ctx, extras) => mapCode(ctx, extras.inputExpression),
  [`${BASE}if`]: (ctx) => mapIf(ctx),
  [`${BASE}switch`]: (ctx) => mapSwitch(ctx),
  [`${BASE}set`]: (ctx) => mapSet(ctx),
  [`${BASE}merge`]: (ctx, extras) => mapMerge(ctx, extras.inputs),
  [`${BASE}splitInBatches`]: (ctx) => mapSplitInBatches(ctx),
  [`${BASE}wait`]: (ctx) => mapWait(ctx),
  [`${BASE}noOp`]: () => mapNoOp(),
  [`${BASE}stopAndError`]: (ctx) => mapStopAndError(ctx),
  [`${BASE}executeWorkflow`]: (ctx) => mapExecuteWorkflow(ctx),
  [`${BASE}scheduleTrigger`]: (ctx) => mapSchedule(ctx),
  [`${BASE}cron`]: (ctx) => mapSchedule(ctx),
  [`${BASE}dataTable`]: (ctx) => mapDataTable(ctx),
  [`${LANGCHAIN}agent`]: (ctx) => mapAgent(ctx),
  [`${LANGCHAIN}chainLlm`]: (ctx) => mapAgent(ctx),
};

export const STICKY_NOTE = `${BASE}stickyNote`;

export function mapperFor(type: string): Mapper | undefined {
  return Object.hasOwn(MAPPERS, type) ? MAPPERS[type] : undefined;
}

/** The n8n types the mapping covers (docs/import.md lists them). */
export const MAPPED_TYPES = Object.freeze(Object.keys(MAPPERS));
