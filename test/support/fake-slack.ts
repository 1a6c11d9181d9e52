import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Slack's Web API (`POST /api/<method>`), speaking its wire format: JSON or
 * form bodies in, `{ok, …}` out. Each method answers from a queue of scripted answers, else a
 * default success; every request is recorded with its headers and parsed body.
 */
export interface SlackAnswer {
  status?: number;
  headers?: Record<string, string>;
  body: Record<string, unknown>;
}

export interface SlackCall {
  method: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface FakeSlack {
  /** The API root to configure as SWITCHYARD_SLACK_API_URL. */
  apiUrl: string;
  calls: SlackCall[];
  script(method: string, ...answers: SlackAnswer[]): void;
  close(): Promise<void>;
}

let posted = 0;

const DEFAULTS: Record<string, (body: Record<string, unknown>) => Record<string, unknown>> = {
  'chat.postMessage': (body) => ({
    ok: true,
    channel: body.channel,
    ts: `1793500000.${String((posted += 1)).padStart(6, '0')}`,
    message: { text: body.text },
  }),
  'auth.test': () => ({
    ok: true,
    url: 'https://acme.slack.com/',
    team: 'Acme',
    user: 'switchyard',
    team_id: 'T0OAUTH',
    user_id: 'U0OAUTHBOT',
    bot_id: 'B0OAUTHBOT',
    is_enterprise_install: false,
  }),
  'oauth.v2.access': () => ({
    ok: true,
    access_token: 'xoxb-from-oauth',
    token_type: 'bot',
    scope: 'app_mentions:read,chat:write,channels:history',
    bot_user_id: 'U0OAUTHBOT',
    app_id: 'A0APP',
    team: { name: 'Acme', id: 'T0OAUTH' },
    enterprise: null,
    authed_user: { id: 'U0INSTALLER' },
  }),
};

export async function startFakeSlack(): Promise<FakeSlack> {
  const scripts = new Map<string, SlackAnswer[]>();
  const calls: SlackCall[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const method = (req.url ?? '').replace(/^\/api\//, '');
      const text = Buffer.concat(chunks).toString('utf8');
      const body = (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')
        ? Object.fromEntries(new URLSearchParams(text))
        : text
          ? (JSON.parse(text) as Record<string, unknown>)
          : {};
      calls.push({ method, headers: req.headers, body });
      const answer = scripts.get(method)?.shift() ?? { body: DEFAULTS[method]?.(body) ?? { ok: false, error: 'unknown_method' } };
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json; charset=utf-8', ...answer.headers });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiUrl: `http://127.0.0.1:${port}/api`,
    calls,
    script: (method, ...answers) => scripts.set(method, [...(scripts.get(method) ?? []), ...answers]),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
