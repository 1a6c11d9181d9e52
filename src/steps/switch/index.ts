import { isPlainObject } from '../../lib/json.js';
import { defineStep } from '../define-step.js';
import type { ConfigIssue } from '../describe-config-errors.js';

/** Unmatched values leave through this port. */
export const SWITCH_DEFAULT_PORT = 'default';
/** Ports a case cannot take, with why: `error` is the port failures take with on_error "continue". */
const RESERVED_PORTS: Record<string, string> = {
  [SWITCH_DEFAULT_PORT]: 'unmatched values leave through that port',
  error: 'failures leave through that port with on_error "continue"',
};

export const switchStep = defineStep({
  outPorts: (config) => switchPorts(config),
  checkConfig: (config) => switchConfigIssues(config),
  slug: 'switch',
  name: 'Switch',
  description: 'Sends its input down the branch of the first case that equals a value.',
  docs: `Routes by value: each case names an out port and the value it stands for. The first case
whose \`equals\` is the same JSON value as \`value\` (objects compared field by field, in any
order) takes its port; when none is, the input leaves through \`default\`.

**Config**

- \`value\` (required): any JSON value, usually one \`{{ … }}\` expression such as
  \`"{{ trigger.body.type }}"\`.
- \`cases\`: a list of \`{port, equals}\`. \`port\` is lower snake_case, unique within the
  node, and neither \`default\` nor \`error\`; \`equals\` is any JSON value and may hold
  expressions too. Default \`[]\`.

**Ports**

One out port per case, in the order of \`cases\`, then \`default\`.

**Output**

The input, unchanged, on the chosen port.`,
  categories: ['decide'],
  icon: 'route',
  iconColor: '#C2410C',
  trigger: false,
  // The static part; each case adds its own port (see `switchPorts`).
  ports: { in: ['in'], out: [SWITCH_DEFAULT_PORT] },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['value'],
    properties: {
      value: {},
      cases: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['port', 'equals'],
          properties: {
            port: { type: 'string', pattern: '^[a-z][a-z0-9_]*$' },
            equals: {},
          },
        },
      },
    },
  },
  defaultConfig: { cases: [] },
  outputSchema: null,
  sortOrder: 100,
  canvasVisible: true,
});

/**
 * The out ports of a switch node with this config: each case's port, then `default`. It reads
 * whatever is there (a config that failed validation still yields the ports it names), so
 * edge checks can run beside the config's own violations.
 */
export function switchPorts(config: Record<string, unknown>): string[] {
  const ports: string[] = [];
  const cases: unknown = config.cases;
  if (Array.isArray(cases)) {
    for (const entry of cases) {
      const port = isPlainObject(entry) ? entry.port : undefined;
      if (typeof port === 'string' && !ports.includes(port) && !Object.hasOwn(RESERVED_PORTS, port)) ports.push(port);
    }
  }
  return [...ports, SWITCH_DEFAULT_PORT];
}

/**
 * What JSON Schema cannot say about `cases`: ports must be unique and must not take a port the
 * node already has. Run after the schema has passed.
 */
export function switchConfigIssues(config: Record<string, unknown>): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const seen = new Map<string, number>();
  const cases = Array.isArray(config.cases) ? config.cases : [];
  cases.forEach((entry: unknown, index) => {
    const port = isPlainObject(entry) ? entry.port : undefined;
    if (typeof port !== 'string') return;
    const pointer = `/cases/${index}/port`;
    const first = seen.get(port);
    if (Object.hasOwn(RESERVED_PORTS, port)) {
      issues.push({ pointer, detail: `config.cases[${index}].port must not be "${port}": ${RESERVED_PORTS[port]}.` });
    } else if (first !== undefined) {
      issues.push({ pointer, detail: `config.cases[${index}].port "${port}" is already used by config.cases[${first}].` });
    } else {
      seen.set(port, index);
    }
  });
  return issues;
}
