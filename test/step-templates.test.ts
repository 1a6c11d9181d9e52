import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from './support/dialects.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const SPEC_SLUGS = ['webhook', 'http', 'agent', 'code', 'call_workflow', 'respond_to_webhook', 'save_to_store'];
/** The control flow the engine adds (DESIGN.md). */
const CONTROL_SLUGS = ['set', 'if', 'switch', 'loop', 'wait'];
/** Imports' stand-in for nodes no step can do (docs/import.md). */
const IMPORT_SLUGS = ['placeholder'];
/** Triggers beyond the contract (docs/triggers.md). */
const TRIGGER_SLUGS = ['schedule'];
/** Steps issues added beside the spec's (issue 12: read_store). */
const ADDED_SLUGS = ['read_store'];
/** Platform triggers (issue 14, docs/triggers.md). */
const PLATFORM_SLUGS = ['app_event', 'chat_reply', 'sms', 'email'];
/** Run control (issue 37, docs/run-control.md). */
const RUN_CONTROL_SLUGS = ['approval'];

describeEachDialect('step templates', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  it('lists the seven templates the spec names, the control-flow steps and the import placeholder, ordered by sort_order, with every default field', async () => {
    const res = await t.request('GET', '/api/v1/step-templates');
    expect(res.status).toBe(200);
    const slugs = res.body.data.map((d: { attributes: { slug: string } }) => d.attributes.slug);
    expect([...slugs].sort()).toEqual(
      [...SPEC_SLUGS, ...CONTROL_SLUGS, ...IMPORT_SLUGS, ...TRIGGER_SLUGS, ...ADDED_SLUGS, ...PLATFORM_SLUGS, ...RUN_CONTROL_SLUGS].sort(),
    );
    expect(slugs.slice(0, 7).sort()).toEqual([...SPEC_SLUGS].sort());
    const orders = res.body.data.map((d: { attributes: { sort_order: number } }) => d.attributes.sort_order);
    expect(orders).toEqual([...orders].sort((a: number, b: number) => a - b));
    const webhook = res.body.data.find((d: { id: string }) => d.id === 'webhook');
    expect(webhook.type).toBe('step-template');
    expect(Object.keys(webhook.attributes).sort()).toEqual(
      [
        'canvas_schema',
        'canvas_visible',
        'category',
        'default_config',
        'description',
        'docs',
        'name',
        'output_schema',
        'ports',
        'slug',
        'sort_order',
      ].sort(),
    );
    expect(webhook.attributes.category).toContain('start');
    expect(webhook.attributes.ports).toEqual({ in: [], out: ['out'] });
    expect(typeof webhook.attributes.output_schema).toBe('string');
    expect(JSON.parse(webhook.attributes.output_schema)).toHaveProperty('type', 'object');
    expect(webhook.attributes.default_config).toMatchObject({ response_mode: 'immediate', verification: { method: 'bearer' } });
  });

  it('shows read_store with its config schema and default limit', async () => {
    const res = await t.request('GET', '/api/v1/step-templates');
    const readStore = res.body.data.find((d: { id: string }) => d.id === 'read_store');
    expect(readStore.attributes).toMatchObject({
      slug: 'read_store',
      name: 'Read Store',
      default_config: { limit: 100 },
      ports: { in: ['in'], out: ['out'] },
    });
    expect(JSON.stringify(readStore.attributes.canvas_schema)).toContain('store_id');
  });

  it('shows the platform triggers, chat_reply and schedule with config schemas naming their fields', async () => {
    const res = await t.request('GET', '/api/v1/step-templates');
    const template = (slug: string) => res.body.data.find((d: { id: string }) => d.id === slug).attributes;
    const fields: Record<string, string[]> = {
      app_event: ['channels', 'only_mentioned'],
      chat_reply: ['text'],
      sms: ['numbers'],
      email: ['recipients', 'subject_contains'],
      schedule: ['cron', 'timezone', 'interval_ms', 'catch_up'],
    };
    for (const [slug, names] of Object.entries(fields)) {
      const attributes = template(slug);
      expect(attributes.canvas_visible, slug).toBe(true);
      const schema = JSON.stringify(attributes.canvas_schema);
      for (const name of names) expect(schema, `${slug}: ${name}`).toContain(`"${name}"`);
    }
    // Triggers start a run: no input port.
    for (const slug of ['app_event', 'sms', 'email', 'schedule']) expect(template(slug).ports.in, slug).toEqual([]);
    expect(template('chat_reply').ports.in).toEqual(['in']);
  });

  it('returns icon and icon_color only when asked', async () => {
    const res = await t.request('GET', '/api/v1/step-templates?fields[step-template]=slug,icon,icon_color');
    expect(Object.keys(res.body.data[0].attributes).sort()).toEqual(['icon', 'icon_color', 'slug']);
    expect(res.body.data[0].attributes.icon_color).toMatch(/^#[0-9A-Fa-f]{6}$/);
  });

  it('filters and sorts with the list language', async () => {
    const res = await t.request('GET', '/api/v1/step-templates?filter[slug][in]=code,http&sort=-slug');
    expect(res.body.data.map((d: { id: string }) => d.id)).toEqual(['http', 'code']);
    const bad = await t.request('GET', '/api/v1/step-templates?filter[sort_order][eq]=ten');
    expect(bad.status).toBe(400);
  });
});
