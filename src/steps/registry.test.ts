import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { STEP_CATEGORIES, defineStep, type StepDefinition } from './define-step.js';
import { findStepDefinition, stepDefinitions } from './registry.js';
import { compileStepConfig, mergeStepConfig, validateStepConfig } from './validate-step-config.js';

const UUID = '0190f5a2-7c1e-7a3b-9d2e-4f5a6b7c8d9e';

/** The fields each step requires beyond its defaults; a new step must add its entry here. */
const MINIMAL_CONFIGS: Record<string, Record<string, unknown>> = {
  webhook: {},
  http: { url: 'https://example.com' },
  agent: { prompt: 'Hello' },
  code: {},
  call_workflow: { workflow_id: UUID },
  respond_to_webhook: {},
  save_to_store: { store_id: UUID, key: 'k', row: {} },
  read_store: { store_id: UUID },
  set: {},
  if: { condition: '{{ trigger.body.ok }}' },
  switch: { value: '{{ trigger.body.type }}' },
  loop: { items: '{{ trigger.body.items }}' },
  wait: { duration_ms: 1000 },
  approval: {},
  schedule: { cron: '0 * * * *' },
  app_event: {},
  chat_reply: { channel: 'C1', text: 'hi' },
  sms: {},
  email: {},
  placeholder: { original: { type: 'n8n-nodes-base.airtable' } },
};

/** Control-flow steps name their out ports after what they decide; every other step has `out`. */
const OUT_PORTS_WITHOUT_OUT: Record<string, string[]> = {
  if: ['true', 'false'],
  switch: ['default'],
  loop: ['body', 'done'],
  approval: ['approved', 'rejected'],
};

describe('step catalog', () => {
  it('lists the seven spec steps first, then control flow, ordered by sortOrder', () => {
    expect(stepDefinitions.map((d) => d.slug)).toEqual([
      'webhook',
      'http',
      'agent',
      'code',
      'call_workflow',
      'respond_to_webhook',
      'save_to_store',
      'read_store',
      'set',
      'if',
      'switch',
      'loop',
      'wait',
      'approval',
      'app_event',
      'sms',
      'email',
      'chat_reply',
      'schedule',
      'placeholder',
    ]);
    const orders = stepDefinitions.map((d) => d.sortOrder);
    expect(orders).toEqual([...orders].sort((a, b) => a - b));
    expect(new Set(orders).size).toBe(orders.length);
  });

  it('has a minimal config for every step, and each validates once merged over the defaults', () => {
    expect(Object.keys(MINIMAL_CONFIGS).sort()).toEqual(stepDefinitions.map((d) => d.slug).sort());
    for (const def of stepDefinitions) {
      expect({ slug: def.slug, issues: validateStepConfig(def, mergeStepConfig(def, MINIMAL_CONFIGS[def.slug] ?? {})) }).toEqual({
        slug: def.slug,
        issues: [],
      });
    }
  });

  it('compiles every config schema and every output schema as JSON Schema', () => {
    const outputs = new Ajv2020({ strict: true });
    for (const def of stepDefinitions) {
      expect(typeof compileStepConfig(def)).toBe('function');
      if (def.outputSchema !== null) expect(typeof outputs.compile(def.outputSchema)).toBe('function');
    }
  });

  it('declares catalog fields the step-template resource needs', () => {
    for (const def of stepDefinitions) {
      expect(def.name.length, def.slug).toBeGreaterThan(0);
      expect(def.description).not.toContain('\n');
      expect(def.docs.length, def.slug).toBeGreaterThan(100);
      expect(def.categories.length, def.slug).toBeGreaterThan(0);
      for (const category of def.categories) expect(STEP_CATEGORIES).toContain(category);
      expect(def.iconColor).toMatch(/^#[0-9A-F]{6}$/);
      expect(def.ports.in.length === 0, def.slug).toBe(def.trigger);
      expect(def.ports.out, def.slug).toEqual(OUT_PORTS_WITHOUT_OUT[def.slug] ?? expect.arrayContaining(['out']));
    }
  });

  it('finds a definition by slug and nothing for an unknown slug', () => {
    expect(findStepDefinition('save_to_store')?.name).toBe('Save to Store');
    expect(findStepDefinition('save-to-store')).toBeUndefined();
    expect(findStepDefinition('')).toBeUndefined();
  });

  it('freezes definitions deeply so one caller cannot change another caller’s defaults', () => {
    const http = findStepDefinition('http') as StepDefinition;
    expect(Object.isFrozen(http.defaultConfig)).toBe(true);
    expect(Object.isFrozen(http.ports.out)).toBe(true);
    expect(() => {
      (http.defaultConfig as Record<string, unknown>).method = 'POST';
    }).toThrow(TypeError);
    expect(Object.isFrozen(stepDefinitions)).toBe(true);
  });

  it('gives each merge a fresh copy of the defaults', () => {
    const webhook = findStepDefinition('webhook') as StepDefinition;
    const merged = mergeStepConfig(webhook, {});
    (merged.verification as Record<string, unknown>).method = 'none';
    expect(webhook.defaultConfig.verification).toEqual({ method: 'bearer' });
  });

  it('replaces a nested default object instead of merging into it', () => {
    const webhook = findStepDefinition('webhook') as StepDefinition;
    expect(mergeStepConfig(webhook, { verification: { method: 'none' } }).verification).toEqual({ method: 'none' });
  });
});

describe('defineStep', () => {
  const base = findStepDefinition('code') as StepDefinition;

  it('rejects slugs that are not lower snake case', () => {
    for (const slug of ['Code', 'save-to-store', '9lives', '']) {
      expect(() => defineStep({ ...base, slug })).toThrow(`Step slug "${slug}" must match /^[a-z][a-z0-9_]*$/.`);
    }
  });

  it('accepts a snake_case slug and freezes the new definition', () => {
    const def = defineStep({ ...base, slug: 'code_v2', defaultConfig: { code: 'return 1;' } });
    expect(def.slug).toBe('code_v2');
    expect(Object.isFrozen(def.defaultConfig)).toBe(true);
  });
});
