import { Command, InvalidArgumentError, Option } from 'commander';
import { loadConfig, SERVE_ROLES, type Config, type ServeRole } from '../config.js';
import { migrateCommand, tokenCreate, tokenList, tokenRevoke, workspaceCreate, workspaceList } from './admin-commands.js';
import { serve } from './serve-command.js';
import { workflowExport } from './workflow-commands.js';
import { appInstall, appList, appSet, appUninstall, readProcessStdin, type ReadStdin } from './app-commands.js';
import { storeDump, storeRestore, type StoreIo } from './store-commands.js';

type Out = (line: string) => void;

function port(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('must be a port number (0-65535)');
  return Number(value);
}

/**
 * The `switchyard` command. Flags override the environment; configuration is validated once
 * per command. `onServe` receives the shutdown function of a running server.
 */
export function buildProgram(
  env: Record<string, string | undefined>,
  out: Out,
  onServe: (stop: () => Promise<void>) => void,
  readStdin: ReadStdin = readProcessStdin,
): Command {
  const program = new Command('switchyard').description('Self-hosted workflow automation service').showHelpAfterError();
  program
    .option('--data-dir <dir>', 'data directory (SWITCHYARD_DATA_DIR)')
    .option('--database-url <url>', 'postgres:// URL (DATABASE_URL); unset: embedded SQLite');
  const config = (extra: Partial<Config> = {}): Config => {
    const global = program.opts<{ dataDir?: string; databaseUrl?: string }>();
    return loadConfig(env, {
      ...(global.dataDir ? { dataDir: global.dataDir } : {}),
      ...(global.databaseUrl ? { databaseUrl: global.databaseUrl } : {}),
      ...extra,
    });
  };

  program
    .command('serve', { isDefault: true })
    .description('run the HTTP API and webhook endpoints')
    .addOption(
      new Option('--role <role>', 'what this process runs (SWITCHYARD_ROLE): all, or api / worker on PostgreSQL').choices(SERVE_ROLES),
    )
    .option('--port <port>', 'listen port (PORT)', port)
    .option('--host <host>', 'listen address (HOST)')
    .action(async (options: { role?: ServeRole; port?: number; host?: string }) => {
      const overrides: Partial<Config> = {};
      if (options.role !== undefined) overrides.role = options.role;
      if (options.port !== undefined) overrides.port = options.port;
      if (options.host !== undefined) overrides.host = options.host;
      onServe(await serve(config(overrides), out));
    });

  program
    .command('migrate')
    .description('apply database migrations (also done at every start)')
    .action(() => migrateCommand(config(), out));

  const workspace = program.command('workspace').description('manage workspaces');
  workspace
    .command('create')
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--slug <slug>', 'unique slug (lower-case letters, digits, dashes)')
    .addOption(new Option('--plan <plan>', 'plan').choices(['free', 'pro']).default('free'))
    .option('--json', 'print JSON')
    .action((options) => workspaceCreate(config(), options, out));
  workspace
    .command('list')
    .option('--json', 'print JSON')
    .action((options) => workspaceList(config(), options, out));

  const token = program.command('token').description('manage API tokens');
  token
    .command('create')
    .requiredOption('--workspace <slug>', 'workspace the token is pinned to')
    .addOption(new Option('--scope <scope>', 'read (GET only) or build (read + writes)').choices(['read', 'build']).makeOptionMandatory())
    .option('--expires-in <duration>', 'lifetime like 90d, 12h, 30m, or never', '90d')
    .option('--name <name>', 'a label for the token')
    .option('--json', 'print {"id","token","scopes","expires_at","workspace"}')
    .action((options) => tokenCreate(config(), options, out));
  token
    .command('list')
    .option('--workspace <slug>', 'only this workspace')
    .option('--json', 'print JSON')
    .action((options) => tokenList(config(), options, out));
  token
    .command('revoke')
    .argument('<id>', 'token id')
    .option('--json', 'print JSON')
    .action((id: string, options) => tokenRevoke(config(), id, options, out));

  const workflow = program.command('workflow').description('workflow documents');
  workflow
    .command('export')
    .description('print a workflow as a service/v1 document (the same as GET /api/v1/workflows/:id/export)')
    .requiredOption('--workspace <slug>', 'the workspace holding the workflow')
    .requiredOption('--id <id>', 'the workflow id')
    .option('--pretty', 'indent the JSON')
    .action((options) => workflowExport(config(), options, out));

  const app = program.command('app').description('provider apps (Slack, Twilio, Mailgun, Postmark) and their installations');
  app
    .command('set')
    .description('set a provider app; a secret given as "-" is read from standard input (one line each, in option order)')
    .argument('<provider>', 'slack, twilio, mailgun or postmark')
    .option('--signing-secret <secret>', "slack: the app's signing secret")
    .option('--client-id <id>', "slack: the app's client id (OAuth install)")
    .option('--client-secret <secret>', "slack: the app's client secret (OAuth install)")
    .option('--signing-key <key>', 'mailgun: the HTTP webhook signing key')
    .option('--json', 'print JSON')
    .action((provider: string, options: Record<string, unknown>) => appSet(config(), provider, options, out, readStdin));
  app
    .command('list')
    .description('list provider apps and installations (never a secret)')
    .option('--json', 'print JSON')
    .action((options) => appList(config(), options, out));
  app
    .command('install')
    .description('link a provider account to a workspace; a credential given as "-" is read from standard input')
    .argument('<provider>', 'slack, twilio, mailgun or postmark')
    .requiredOption('--workspace <slug>', "the workspace the account's events go to")
    .requiredOption('--account-id <id>', 'slack team id, Twilio AccountSid, or the email domain or address')
    .option('--bot-token <token>', 'slack: the bot token (xoxb-…)')
    .option('--bot-user-id <id>', "slack: the bot's user id (U…)")
    .option('--bot-id <id>', 'slack: the bot id (B…)')
    .option('--auth-token <token>', "twilio: the account's auth token")
    .option('--basic-user <user>', 'postmark: the Basic user of the inbound webhook URL')
    .option('--basic-password <password>', 'postmark: the Basic password of the inbound webhook URL')
    .option('--json', 'print the installation resource')
    .action((provider: string, options: Record<string, unknown>) => appInstall(config(), provider, options, out, readStdin));
  app
    .command('uninstall')
    .description('remove an installation, by --id or by provider and --account-id')
    .argument('[provider]', 'slack, twilio, mailgun or postmark')
    .option('--id <id>', 'the installation id')
    .option('--account-id <id>', 'the account id')
    .option('--json', 'print JSON')
    .action((provider: string | undefined, options) => appUninstall(config(), provider, options, out));
  const store = program.command('store').description('store dumps (the same as GET /stores/:id/dump and POST /stores/restore)');
  const io: StoreIo = { stdin: process.stdin, stdout: process.stdout, progress: (line) => process.stderr.write(`${line}\n`) };
  store
    .command('dump')
    .description('write a store to stdout: ndjson (default, restorable), csv or json; progress on stderr')
    .requiredOption('--workspace <slug>', 'the workspace holding the store')
    .requiredOption('--slug <slug>', 'the store')
    .option('--format <format>', 'ndjson, csv or json', 'ndjson')
    .action((options) => storeDump(config(), options, io));
  store
    .command('restore')
    .description('make a NEW store from an NDJSON dump on stdin; prints the restore report; progress on stderr')
    .requiredOption('--workspace <slug>', 'the workspace to hold the store')
    .requiredOption('--slug <slug>', "the new store's slug (refused when taken)")
    .option('--name <name>', "the new store's name (the dump's when absent)")
    .action((options) => storeRestore(config(), options, io, out));
  return program;
}
