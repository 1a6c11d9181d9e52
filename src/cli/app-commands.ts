import type { Config } from '../config.js';
import { buildDeps } from '../deps.js';
import type { AppInstallationRow } from '../store/app-installation-repository.js';
import { isAppProvider } from '../services/apps/app-service.js';
import { PROVIDER_SPECS } from '../services/apps/provider-specs.js';

type Out = (line: string) => void;
/** The whole of standard input (secrets given as `-`). */
export type ReadStdin = () => Promise<string>;

export async function readProcessStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `--signing-secret` -> `signing_secret`. */
function optionName(field: string): string {
  return field.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
}

/**
 * Values of the named fields from parsed options. A value `-` is read from standard input: one
 * line per such flag, in the order the fields are listed, so secrets stay out of the shell's
 * history and the process list.
 */
async function fieldValues(
  fields: readonly string[],
  options: Record<string, unknown>,
  stdin: { lines: () => Promise<string[]> },
): Promise<Record<string, string>> {
  const values: Record<string, string> = {};
  for (const field of fields) {
    const value = options[optionName(field)];
    if (typeof value !== 'string') continue;
    if (value === '-') {
      const lines = await stdin.lines();
      const line = lines.shift();
      if (line === undefined || line.trim() === '') throw new Error(`--${field.replace(/_/g, '-')} - expects a line on standard input`);
      values[field] = line.trim();
    } else {
      values[field] = value;
    }
  }
  return values;
}

function stdinLines(read: ReadStdin): { lines: () => Promise<string[]> } {
  let lines: string[] | null = null;
  return { lines: async () => (lines ??= (await read()).split(/\r?\n/)) };
}

function checkProvider(provider: string): void {
  if (!isAppProvider(provider)) throw new Error(`provider must be one of ${Object.keys(PROVIDER_SPECS).join(', ')}, not "${provider}"`);
}

/** The installation as the API shows it: never a credential. */
export function installationJson(row: AppInstallationRow): Record<string, unknown> {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    provider: row.provider,
    account_id: row.account_id,
    bot_user_id: row.bot_user_id,
    bot_id: row.bot_id,
    created_at: row.created_at,
  };
}

/** `switchyard app set <provider> --signing-secret S …`: settings and secrets of the provider's app. */
export async function appSet(config: Config, provider: string, options: Record<string, unknown>, out: Out, read: ReadStdin): Promise<void> {
  checkProvider(provider);
  const spec = PROVIDER_SPECS[provider as keyof typeof PROVIDER_SPECS];
  for (const key of Object.keys(options)) {
    const field = key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    if (key !== 'json' && options[key] !== undefined && !spec.settings.includes(field) && !spec.secrets.includes(field)) {
      throw new Error(
        `--${field.replace(/_/g, '-')} is not an option of the ${provider} app (${[...spec.settings, ...spec.secrets].map((f) => `--${f.replace(/_/g, '-')}`).join(', ') || 'none'})`,
      );
    }
  }
  const stdin = stdinLines(read);
  const settings = await fieldValues(spec.settings, options, stdin);
  const secrets = await fieldValues(spec.secrets, options, stdin);
  const deps = await buildDeps(config, { timers: false });
  try {
    const app = await deps.apps.setApp(provider, { settings, secrets });
    out(options.json ? JSON.stringify(app) : `set the ${provider} app; secrets set: ${app.secrets_set.join(', ') || 'none'}`);
  } finally {
    await deps.close();
  }
}

/** `switchyard app list`: every app with its settings and the names of its secrets, never a secret. */
export async function appList(config: Config, options: { json?: boolean }, out: Out): Promise<void> {
  const deps = await buildDeps(config, { timers: false });
  try {
    const apps = await deps.apps.listApps();
    const installations = await deps.apps.listAllInstallations();
    if (options.json) {
      out(JSON.stringify({ apps, installations: installations.map(installationJson) }));
      return;
    }
    if (apps.length === 0) out('no provider apps set');
    for (const app of apps)
      out(`${app.provider}: settings ${JSON.stringify(app.settings)}; secrets set: ${app.secrets_set.join(', ') || 'none'}`);
    for (const row of installations)
      out(
        `installation ${row.id}: ${row.provider} ${row.account_id} -> workspace ${row.workspace_id}${row.bot_user_id ? ` (bot ${row.bot_user_id}/${row.bot_id ?? '-'})` : ''}`,
      );
  } finally {
    await deps.close();
  }
}

/** `switchyard app install <provider> --workspace S --account-id A …`: links an account to a workspace. */
export async function appInstall(
  config: Config,
  provider: string,
  options: Record<string, unknown>,
  out: Out,
  read: ReadStdin,
): Promise<void> {
  checkProvider(provider);
  const spec = PROVIDER_SPECS[provider as keyof typeof PROVIDER_SPECS];
  const stdin = stdinLines(read);
  const credentials = await fieldValues(spec.credentials, options, stdin);
  const deps = await buildDeps(config, { timers: false });
  try {
    const row = await deps.apps.install({
      provider,
      workspace: { slug: String(options.workspace) },
      accountId: String(options.accountId),
      botUserId: typeof options.botUserId === 'string' ? options.botUserId : null,
      botId: typeof options.botId === 'string' ? options.botId : null,
      credentials,
    });
    out(
      options.json
        ? JSON.stringify(installationJson(row))
        : `installed ${row.provider} account ${row.account_id} in workspace ${String(options.workspace)} (${row.id})`,
    );
  } finally {
    await deps.close();
  }
}

/** `switchyard app uninstall (--id ID | <provider> --account-id A)`. */
export async function appUninstall(
  config: Config,
  provider: string | undefined,
  options: { id?: string; accountId?: string; json?: boolean },
  out: Out,
): Promise<void> {
  if (!options.id && !(provider && options.accountId)) throw new Error('give --id, or a provider and --account-id');
  const deps = await buildDeps(config, { timers: false });
  try {
    const row = await deps.apps.uninstall(options.id ? { id: options.id } : { provider: provider!, accountId: options.accountId! });
    out(
      options.json
        ? JSON.stringify({ ...installationJson(row), removed: true })
        : `uninstalled ${row.provider} account ${row.account_id} (${row.id})`,
    );
  } finally {
    await deps.close();
  }
}
