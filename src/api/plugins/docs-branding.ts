import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';

/**
 * The interactive reference's own look: the product's name in the top bar and the tab, and a mark
 * of ours instead of the framework's logo (which @fastify/swagger-ui shows unless given another)
 * and Swagger's favicons. Inline SVG served by the app, so the page still needs no internet.
 */
export const DOCS_TITLE = 'Switchyard API';

/** Two tracks parting at a switch: the mark, drawn on the top bar's dark background. */
const MARK = `<g fill="none" stroke="#7dd3a8" stroke-width="3" stroke-linecap="round"><path d="M4 29 H34"/><path d="M4 29 C16 29 19 11 34 11"/></g><circle cx="34" cy="11" r="3.5" fill="#7dd3a8"/><circle cx="34" cy="29" r="3.5" fill="#7dd3a8"/>`;

export const DOCS_LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="210" height="40" viewBox="0 0 210 40" role="img" aria-label="${DOCS_TITLE}"><title>${DOCS_TITLE}</title>${MARK}<text x="46" y="26.5" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif" font-size="18" font-weight="600" fill="#ffffff">${DOCS_TITLE}</text></svg>`;

export const DOCS_FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40" viewBox="0 0 40 40"><rect width="40" height="40" rx="8" fill="#1b1b1b"/>${MARK}</svg>`;

/** Swagger UI draws its own logo first and the initializer swaps ours in: never show theirs. */
const CSS = '.swagger-ui .topbar .topbar-wrapper a svg { display: none; }';

/** The `logo` and `theme` options of @fastify/swagger-ui. */
export const DOCS_BRANDING: Pick<FastifySwaggerUiOptions, 'logo' | 'theme'> = {
  logo: { type: 'image/svg+xml', content: Buffer.from(DOCS_LOGO_SVG), href: '/api/docs', target: '_self' },
  theme: {
    title: DOCS_TITLE,
    favicon: [{ filename: 'favicon.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: Buffer.from(DOCS_FAVICON_SVG) }],
    css: [{ filename: 'switchyard.css', content: CSS }],
  },
};
