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
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
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
    expect(paths.map((p) => p.replace(/\u200b/g, ''))).toEqual(
      expect.arrayContaining(['/api/v1/workflows', '/api/v1/workflows/{id}/graph', '/api/v1/folders']),
    );
    expect(await page.locator('.opblock-tag', { hasText: 'Workflows' }).count()).toBeGreaterThan(0);
    expect(outside).toEqual([]);
  }, 60_000);

  it("shows the product's own name and mark, and neither Swagger's nor the framework's logo or favicon", async () => {
    const page = await browser.newPage();
    const outside: string[] = [];
    const assets: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(base) && !request.url().startsWith('data:')) outside.push(request.url());
      if (request.url().startsWith(base)) assets.push(new URL(request.url()).pathname);
    });
    await page.goto(`${base}/api/docs`);
    const logo = page.locator('.topbar-wrapper a img');
    await logo.waitFor({ state: 'visible', timeout: 20_000 });
    await page.locator('.info .title', { hasText: 'Switchyard API' }).waitFor({ state: 'visible', timeout: 20_000 });

    expect(await page.title()).toBe('Switchyard API');
    const src = (await logo.getAttribute('src')) ?? '';
    expect(src.startsWith('data:image/svg+xml;base64,')).toBe(true);
    const svg = Buffer.from(src.slice('data:image/svg+xml;base64,'.length), 'base64').toString('utf8');
    expect(svg).toContain('>Switchyard API</text>');
    expect(svg.toLowerCase()).not.toContain('fastify');
    expect(svg.toLowerCase()).not.toContain('swagger');
    // Swagger UI's own top-bar logo is an inline <svg> in the same link: it must be gone.
    expect(await page.locator('.topbar-wrapper a.link svg').count()).toBe(0);
    expect(await page.locator('.topbar-wrapper a.link img').count()).toBe(1);

    const icons = await page
      .locator('link[rel~="icon"]')
      .evaluateAll((links) => links.map((link) => (link as unknown as { href: string }).href));
    expect(icons).toEqual([`${base}/api/docs/static/theme/favicon.svg`]);
    const icon = await fetch(icons[0]!);
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect((await icon.text()).toLowerCase()).not.toContain('swagger');
    expect(assets.filter((asset) => /favicon-(16|32)x|logo\.svg/.test(asset))).toEqual([]);
    expect(outside).toEqual([]);
  }, 60_000);
});
