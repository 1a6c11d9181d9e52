import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Opens the interactive API reference in Debian's headless Chromium. The machine has no
 * internet, so this also proves the page needs none. Where Chromium is not installed the test
 * is skipped, unless SWITCHYARD_TEST_BROWSER=required (CI), where its absence fails.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
const required = process.env.SWITCHYARD_TEST_BROWSER === 'required';
if (!available && !required) console.warn(`docs browser test skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`);

describe.skipIf(!available && !required)('API docs page in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('renders the workflow routes from the bundled assets, with no request leaving the machine', async () => {
    const page = await browser.newPage();
    const outside: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(base) && !request.url().startsWith('data:')) outside.push(request.url());
    });
    await page.goto(`${base}/api/docs`);
    const workflowsRoute = page.locator('.opblock-summary-path', { hasText: '/api/v1/workflows' }).first();
    await workflowsRoute.waitFor({ state: 'visible', timeout: 20_000 });
    const paths = await page.locator('.opblock-summary-path').allTextContents();
    expect(paths.map((p) => p.replace(/\u200b/g, ''))).toEqual(expect.arrayContaining(['/api/v1/workflows', '/api/v1/workflows/{id}/graph', '/api/v1/folders']));
    expect(await page.locator('.opblock-tag', { hasText: 'Workflows' }).count()).toBeGreaterThan(0);
    expect(outside).toEqual([]);
  }, 60_000);
});
