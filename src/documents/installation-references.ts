import { isPlainObject } from '../lib/json.js';
import { APP_PROVIDERS, type AppProvider } from '../db/schema.js';
import type { BindingRequest } from './import-draft.js';

/**
 * Steps that act through a provider installation of the workspace (docs/triggers.md) instead
 * of a config field naming it: the platform triggers start on what the provider delivers for
 * the installed account, and `chat_reply` posts as the installed bot. An email trigger is
 * served by a Mailgun or a Postmark installation alike. Only `chat_reply` may pin an account
 * (`team_id`); the other configs filter deliveries (channels, numbers, recipients) and name no
 * installation.
 */
const INSTALLATION_STEPS: Readonly<Record<string, { providers: readonly AppProvider[]; accountField?: string }>> = {
  app_event: { providers: ['slack'] },
  chat_reply: { providers: ['slack'], accountField: 'team_id' },
  sms: { providers: ['twilio'] },
  email: { providers: ['mailgun', 'postmark'] },
};

/** A node that needs an installation, and of what: providers (any one serves) and the account when pinned. */
export interface InstallationUse {
  /** The node itself: `/nodes/3`. */
  pointer: string;
  node_id: string;
  step: string;
  providers: AppProvider[];
  /** The provider account the config pins as a literal (a Slack team id); absent: any installation. */
  account_id?: string;
}

/** The nodes of a graph (Switchyard's shape, possibly unvalidated) that need an installation, in node order. */
export function installationUsesOf(graph: unknown): InstallationUse[] {
  if (!isPlainObject(graph) || !Array.isArray(graph.nodes)) return [];
  const uses: InstallationUse[] = [];
  graph.nodes.forEach((node: unknown, index) => {
    if (!isPlainObject(node) || typeof node.type !== 'string' || !Object.hasOwn(INSTALLATION_STEPS, node.type)) return;
    const need = INSTALLATION_STEPS[node.type]!;
    const use: InstallationUse = { pointer: `/nodes/${index}`, node_id: String(node.id), step: node.type, providers: [...need.providers] };
    const account = need.accountField !== undefined && isPlainObject(node.config) ? node.config[need.accountField] : undefined;
    // An expression picks the account at run time (the trigger's team): no account to name.
    if (typeof account === 'string' && account !== '' && !account.includes('{{')) use.account_id = account;
    uses.push(use);
  });
  return uses;
}

export function isAppProvider(value: unknown): value is AppProvider {
  return typeof value === 'string' && (APP_PROVIDERS as readonly string[]).includes(value);
}

const PROVIDER_NAMES: Readonly<Record<AppProvider, string>> = {
  slack: 'Slack',
  twilio: 'Twilio',
  mailgun: 'Mailgun',
  postmark: 'Postmark',
};

/** What the import report says a node needs: which installation, and how to make one. */
function describeInstallationUse(use: Pick<InstallationUse, 'node_id' | 'step' | 'providers' | 'account_id'>): string {
  const providers = use.providers.map((p) => PROVIDER_NAMES[p]).join(' or ');
  const account = use.account_id === undefined ? '' : ` for account ${use.account_id}`;
  const commands = use.providers.map((p) => `switchyard app install ${p}`).join(' or ');
  return `node "${use.node_id}" (${use.step}) works through a ${providers} installation${account}, and this workspace has none: install one (${commands}${use.providers.includes('slack') ? ', or the Slack OAuth install' : ''}); installations are never imported`;
}

/** One binding per node that needs an installation: satisfied when the workspace has one, else a requirement. */
export function installationBindings(graph: Record<string, unknown>): BindingRequest[] {
  return installationUsesOf(graph).map((use) => ({
    pointer: use.pointer,
    resource: 'installation',
    by: { providers: use.providers, ...(use.account_id === undefined ? {} : { account_id: use.account_id }) },
    detail: describeInstallationUse(use),
    facts: { node_id: use.node_id },
  }));
}
