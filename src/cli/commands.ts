/**
 * The executable's commands. `serve` is the default; the others work on the data directory
 * directly (they call services, never HTTP), so they also work while the server runs.
 */
import { parseArgs } from 'node:util';
import {
  ConfigError,
  configParseOptions,
  describeOptions,
  inheritedWorkerConfig,
  loadConfig,
  whisperModelOf,
  type Config,
} from '../config';
import { ApiError } from '../errors';
import { createLogger } from '../log';
import { addCommand, askCommand, ClientError, clientOptions, lsCommand, searchCommand } from './client';
import { startServer } from '../server';

export { VERSION } from '../version';
import { VERSION } from '../version';
import { decoderInfo, decoderLine } from '../media/decoder';
import { DataDir } from '../storage/files';
import type { Catalog } from '../storage/catalog';
import { openCatalog } from '../storage/open';
import { AccountService } from '../accounts/service';
import { IndexService } from '../indexes/service';
import { WebhookService } from '../webhooks/service';

interface Command {
  usage: string;
  help: string;
  options: Record<string, { type: 'string' | 'boolean' }>;
  /** Flags of this command that share a service option's name: they are the command's, not the config's. */
  shadows?: string[];
  /** Takes positional arguments (files, a question); other commands refuse them. */
  positionals?: boolean;
  run(values: Record<string, string | boolean | undefined>, config: Config, positionals: string[]): Promise<number>;
}

const json = { type: 'boolean' as const };
const str = { type: 'string' as const };
const client = { server: str, token: str };

const COMMANDS: Record<string, Command> = {
  serve: {
    usage: 'serve [--data-dir DIR] [--host H] [--port N] [--allow-private-urls] [--workers N] [options]',
    help: 'Start the HTTP service (the default command). On the first start it creates a default user and prints its token once. --workers N: N analysis processes (as --analysis-workers N), but --workers 0 makes an API-only node: new videos are queued for the `vidq worker` nodes of the catalog, where --analysis-workers 0 analyses nothing.',
    options: { workers: str },
    async run(v, config) {
      const { config: c, role } = withWorkers(v, config, 'all');
      const server = await startServer(c, undefined, undefined, role === 'api' ? { role } : {});
      const stop = async (signal: string) => {
        createLogger(config.logLevel).info('stopping', { signal });
        await server.stop();
        process.exit(0);
      };
      process.on('SIGINT', () => void stop('SIGINT'));
      process.on('SIGTERM', () => void stop('SIGTERM'));
      return new Promise<number>(() => {}); // runs until a signal
    },
  },
  worker: {
    usage: 'worker [--data-dir DIR] [--media-dir DIR] [--database URL] [--workers N] [options]',
    help: 'Start an analysis node (no HTTP): its analysis processes claim jobs from the shared queue and write findings and frames, and it reports a heartbeat (`vidq nodes`). Today: on the data directory of a server on the same machine (its SQLite file); PostgreSQL nodes on other machines once --database is accepted (docs/more-machines.md).',
    options: { workers: str },
    async run(v, config) {
      const { startWorkerNode } = await import('../cluster/worker-node');
      const node = await startWorkerNode(withWorkers(v, config, 'worker').config);
      const stop = async (signal: string) => {
        createLogger(config.logLevel).info('stopping', { signal });
        await node.stop();
        process.exit(0);
      };
      process.on('SIGINT', () => void stop('SIGINT'));
      process.on('SIGTERM', () => void stop('SIGTERM'));
      return new Promise<number>(() => {}); // runs until a signal
    },
  },
  nodes: {
    usage: 'nodes [--all] [--json]',
    help: 'List the nodes of the cluster (each serve and vidq worker on this catalog: the SQLite file of the data directory, or --database): host, role, version, jobs running, last seen. Nodes unseen for 15 s are gone and left out; --all shows them too.',
    options: { all: { type: 'boolean' }, json },
    async run(v, config) {
      const { listNodesCommand } = await import('../cluster/nodes-command');
      return withCatalog(config, (s) => listNodesCommand(s, { all: v.all === true, json: v.json === true }));
    },
  },
  'user create': {
    usage: 'user create --name NAME [--credits C] [--json]',
    help: 'Create a user and its first token (printed once; with a server-wide --webhook-url also its webhook signing secret). Without --credits the user gets the configured default balance; --credits unlimited gives no limit.',
    options: { name: { type: 'string' }, credits: { type: 'string' }, json },
    async run(v, config) {
      if (typeof v.name !== 'string') throw new UsageError('--name is required');
      const credits =
        v.credits === undefined
          ? config.defaultCredits
          : v.credits === 'unlimited'
            ? null
            : parseWhole(v.credits as string, '--credits');
      return withCatalog(config, async (s) => {
        const { user, token } = await s.accounts.createUser(v.name as string, credits);
        // With a server-wide --webhook-url, this user's deliveries go there signed with a secret of
        // their own: shown here, once (issue 25), as no request of theirs sets a URL.
        const secret = config.webhookUrl ? (await s.webhooks.ensureSecret(user.id)).secret : undefined;
        if (v.json)
          console.log(
            JSON.stringify({
              user_id: user.id,
              token,
              credits: user.credits,
              ...(secret && { webhook_secret: secret }),
            }),
          );
        else
          console.log(
            `user_id: ${user.id}\ntoken:   ${token}\ncredits: ${user.credits ?? 'unlimited'}${secret ? `\nwebhook secret: ${secret} (signs deliveries to --webhook-url)` : ''}\n(shown only now; keep it safe)`,
          );
      });
    },
  },
  'token create': {
    usage: 'token create --user USER_ID [--json]',
    help: 'Create another token for a user (printed once).',
    options: { user: { type: 'string' }, json },
    async run(v, config) {
      if (typeof v.user !== 'string') throw new UsageError('--user is required');
      return withCatalog(config, async (s) => {
        const token = await s.accounts.createToken(v.user as string);
        console.log(v.json ? JSON.stringify({ user_id: v.user, token }) : token);
      });
    },
  },
  'token revoke': {
    usage: 'token revoke --token TOKEN [--json]',
    help: 'Revoke a token; requests with it get 401 from then on.',
    options: { token: { type: 'string' }, json },
    async run(v, config) {
      if (typeof v.token !== 'string') throw new UsageError('--token is required');
      return withCatalog(config, async (s) => {
        const revoked = await s.accounts.revokeToken(v.token as string);
        console.log(v.json ? JSON.stringify({ revoked }) : revoked ? 'revoked' : 'unknown or already revoked token');
        return revoked ? 0 : 1;
      });
    },
  },
  'models pull': {
    usage: 'models pull [--id MODEL_ID] [--json]',
    help: 'Download a Whisper model (ONNX, transformers.js layout) from the Hugging Face hub into the models directory, verified, once, on a machine that is online (HF_ENDPOINT and HF_TOKEN are honoured). Analysis then runs offline with --stt auto or whisper.',
    options: { id: { type: 'string' }, json },
    async run(v, config) {
      const { pullWhisperModel } = await import('../analysis/assets/models-pull');
      const id = typeof v.id === 'string' ? v.id : whisperModelOf(config);
      let shown = '';
      const res = await pullWhisperModel({
        id,
        modelsDir: config.modelsDir,
        // One line per file, not per chunk: quiet but shows that long work progresses.
        onProgress: (file) => {
          if (file !== shown && !v.json) process.stderr.write(`downloading ${file}\n`);
          shown = file;
        },
      });
      console.log(
        v.json
          ? JSON.stringify({ id, dir: res.dir, files: res.files.length })
          : `${id}: ${res.files.length} files in ${res.dir}`,
      );
      return 0;
    },
  },
  add: {
    usage: 'add PATH|URL|DIR... --index NAME [--server URL] [--token T]',
    help: 'Add videos to an index of a running service: files are uploaded, folders recursively (videos only; files the index already has are skipped by content), URLs fetched by the service. One progress bar per file (plain lines when not a terminal), then the analysis until ready. Exits 1 if any failed, with the reason per file. Server: --server, VIDQ_SERVER, or --host/--port; token: --token, VIDQ_TOKEN, or DATA_DIR/default-token.txt.',
    options: { index: str, ...client },
    positionals: true,
    async run(v, config, args) {
      if (typeof v.index !== 'string')
        throw new UsageError('--index is required (the name or index_id; a new name creates the index)');
      return addCommand(clientOptions(v, config), v.index, args);
    },
  },
  ask: {
    usage: 'ask --index NAME "question" [--video FILE_ID] [--at 1:23] [--server URL] [--token T]',
    help: 'Ask a running service about an index; the answer streams to the terminal, then the moments it cites.',
    options: { index: str, video: str, at: str, ...client },
    positionals: true,
    async run(v, config, args) {
      if (typeof v.index !== 'string') throw new UsageError('--index is required');
      if (args.length !== 1) throw new UsageError('give the question as one quoted argument');
      return askCommand(clientOptions(v, config), v.index, args[0]!, {
        video: v.video as string | undefined,
        at: v.at as string | undefined,
      });
    },
  },
  search: {
    usage:
      'search --index NAME "words" [--video FILE_ID] [--kinds ocr,speech,…] [--limit N] [--offset N] [--server URL] [--token T]',
    help: 'Search an index of a running service for moments (no answer is written, no credit charged): one line per moment, best first, as `ask` lists the moments it cites.',
    options: { index: str, video: str, kinds: str, limit: str, offset: str, ...client },
    positionals: true,
    async run(v, config, args) {
      if (typeof v.index !== 'string') throw new UsageError('--index is required');
      if (args.length !== 1) throw new UsageError('give the words to look for as one quoted argument');
      return searchCommand(clientOptions(v, config), v.index, args[0]!, {
        video: v.video as string | undefined,
        kinds: v.kinds as string | undefined,
        limit: v.limit as string | undefined,
        offset: v.offset as string | undefined,
      });
    },
  },
  ls: {
    usage: 'ls [--index NAME] [--server URL] [--token T]',
    help: "List a running service's indexes, or with --index the videos of one with their status.",
    options: { index: str, ...client },
    async run(v, config) {
      return lsCommand(clientOptions(v, config), v.index as string | undefined);
    },
  },
  mcp: {
    usage: 'mcp [--server URL] [--token T]',
    help: 'Serve the MCP tools (list_indexes, search_moments, ask, add_video, …) over stdio for an AI assistant, as a client of a running service: configure the assistant to start this command (docs/mcp.md). Server: --server, VIDQ_SERVER, or --host/--port; token: --token, VIDQ_TOKEN, or DATA_DIR/default-token.txt. stdout carries the protocol only.',
    options: { ...client },
    async run(v, config) {
      const { runStdioServer } = await import('../mcp/stdio');
      return runStdioServer(clientOptions(v, config));
    },
  },
  'credits add': {
    usage: 'credits add --user USER_ID --amount N [--json]',
    help: "Add N credits to a user's balance (--amount=-N takes them away, never below zero).",
    options: { user: { type: 'string' }, amount: { type: 'string' }, json },
    async run(v, config) {
      if (typeof v.user !== 'string') throw new UsageError('--user is required');
      if (typeof v.amount !== 'string') throw new UsageError('--amount is required');
      const amount = parseSigned(v.amount, '--amount');
      return withCatalog(config, async (s) => {
        const u = await s.accounts.addCredits(v.user as string, amount);
        console.log(
          v.json ? JSON.stringify({ user_id: u.id, credits: u.credits }) : `credits: ${u.credits ?? 'unlimited'}`,
        );
      });
    },
  },
  reanalyze: {
    usage: 'reanalyze --index NAME [--user USER_ID] [--analyzers captions,speech,…] [--json]',
    help:
      'Queue a reanalysis of every ready video of an index (e.g. captions after --captioner was configured): only those stages run, the other segments stay. ' +
      "Default: the stages whose engine or model changed, or that were skipped. A running server's worker picks the jobs up; progress shows on the resources. " +
      "Give it the same options (or config file) as the server: the plan is made from them (--analyzers here names the stages to run again; the server's analyzer list comes from VIDQ_ANALYZERS or the config file). Without --user, the index name must belong to one user only.",
    options: { index: { type: 'string' }, user: { type: 'string' }, analyzers: { type: 'string' }, json },
    shadows: ['analyzers'],
    async run(v, config) {
      if (typeof v.index !== 'string') throw new UsageError('--index is required: the name (or index_id) of an index');
      const requested =
        typeof v.analyzers === 'string'
          ? v.analyzers
              .split(',')
              .map((x) => x.trim())
              .filter(Boolean)
          : undefined;
      const { reanalyzeIndex, ReanalyzeService } = await import('../jobs/reanalyze');
      const { openJobQueue } = await import('../jobs/queues');
      const { createAnalyzers } = await import('../analysis');
      const { Limiter, modelLimitPerWorker } = await import('../analysis/engines/model-server/client');
      // On the catalog alone (either dialect): the jobs go to its queue, which the analysis workers
      // of a running server (or of worker nodes) take them from.
      return withCatalog(config, async (s) => {
        const queue = await openJobQueue(s.catalog, {
          databaseUrl: config.database,
          shortLaneSec: config.shortLaneSec,
          log: createLogger('warn'),
        });
        let r: Awaited<ReturnType<typeof reanalyzeIndex>>;
        try {
          const modelLimiter = new Limiter(modelLimitPerWorker(config.modelConcurrency, config.analysisWorkers));
          // The stages the workers run, as the server names them (no model is loaded for that).
          const stages = createAnalyzers(config, { modelLimiter }).map((a) => ({
            stage: a.stage,
            info: { kind: a.info.kind, name: a.info.name },
          }));
          const reanalyze = new ReanalyzeService({
            catalog: s.catalog,
            queue,
            stages: () => stages,
            workers: config.analysisWorkers,
            userMaxQueued: config.userMaxQueued,
          });
          r = await reanalyzeIndex(
            { ...s, reanalyze },
            v.index as string,
            typeof v.user === 'string' ? v.user : undefined,
            requested,
          );
        } finally {
          await queue.close();
        }
        if (v.json) console.log(JSON.stringify(r));
        else {
          for (const q of r.queued) console.log(`${q.file_id}: ${q.analyzers.join(', ')}`);
          for (const k of r.skipped) console.log(`${k.file_id}: not queued (${k.reason})`);
          console.log(`${r.queued.length} video(s) queued`);
        }
        return 0;
      });
    },
  },
};

class UsageError extends Error {}

/**
 * `--workers N` of serve and worker (issue 33's recipe): N analysis processes. For serve, 0 is an
 * API-only node (videos queued for worker nodes), unlike --analysis-workers 0 (no analysis at all).
 */
function withWorkers(
  v: Record<string, string | boolean | undefined>,
  config: Config,
  role: 'all' | 'worker',
): { config: Config; role?: 'api' | 'all' | 'worker' } {
  if (typeof v.workers !== 'string') return { config, ...(role === 'worker' && { role }) };
  if (!/^\d+$/.test(v.workers)) throw new UsageError('--workers must be a whole number ≥ 0');
  const n = Number(v.workers);
  return { config: { ...config, analysisWorkers: n }, role: role === 'all' && n === 0 ? 'api' : role };
}

function parseWhole(s: string, flag: string): number {
  if (!/^\d+$/.test(s)) throw new UsageError(`${flag} must be a whole number ≥ 0 (or "unlimited")`);
  return Number(s);
}
function parseSigned(s: string, flag: string): number {
  if (!/^-?\d+$/.test(s)) throw new UsageError(`${flag} must be a whole number`);
  return Number(s);
}

/** What the account commands use: the catalog alone, in either dialect (no workers, no models, no media). */
interface CatalogParts {
  catalog: Catalog;
  accounts: AccountService;
  webhooks: WebhookService;
}

/**
 * Runs an administration command on the catalog alone (storage/open.ts): the SQLite file in the
 * data directory, or the PostgreSQL server of --database / VIDQ_DATABASE_URL.
 */
async function withCatalog(
  config: Config,
  // biome-ignore lint/suspicious/noConfusingVoidType: a command body may return an exit code or nothing
  fn: (s: CatalogParts) => number | void | Promise<number | void>,
): Promise<number> {
  const files = new DataDir(config.dataDir, config.mediaDir);
  if (!config.database) {
    files.ensure();
    // As at every start on this data directory: its media folder must be its own.
    const foreignMedia = files.claimMediaRoot();
    if (foreignMedia) throw new ConfigError(foreignMedia);
  }
  const { catalog, close } = await openCatalog({ database: config.database, sqliteFile: files.dbFile });
  try {
    const log = createLogger('warn');
    const accounts = new AccountService(catalog);
    const webhooks = new WebhookService({ catalog, config, indexes: new IndexService(catalog), log });
    return (await fn({ catalog, accounts, webhooks })) ?? 0;
  } finally {
    await close();
  }
}

function generalHelp(): string {
  const cmds = Object.values(COMMANDS)
    .map((c) => `  vidq ${c.usage}\n      ${c.help}`)
    .join('\n');
  return `vidq ${VERSION} — self-hosted video understanding service

Usage:
${cmds}
  vidq COMMAND --help      help for one command
  vidq --version

Options of every command (flags > environment > config file > defaults):
${describeOptions()}`;
}

function commandHelp(c: Command): string {
  return `Usage: vidq ${c.usage}\n\n${c.help}\n\nService options:\n${describeOptions()}`;
}

/**
 * `--name value` as `--name=value` for every option that takes a value: parseArgs refuses a value
 * that starts with "-" as ambiguous, and a token or id issued before they were kept from starting
 * with one can (`vidq mcp --token -x…`).
 */
function valuesAttached(args: string[], options: Record<string, { type: string; short?: string }>): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      out.push(...args.slice(i));
      break;
    }
    const next = args[i + 1];
    if (a.startsWith('--') && !a.includes('=') && options[a.slice(2)]?.type === 'string' && next !== undefined) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/** Runs the command line; returns the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  if (argv[0] === '--version' || argv[0] === 'version') {
    console.log(VERSION);
    // The decoder too: it decodes every upload and live source (issue 37).
    try {
      const config = loadConfig({});
      const decoder = await decoderInfo(new DataDir(config.dataDir, config.mediaDir).binDir);
      console.log(decoderLine(decoder));
      if (decoder.warning) console.error(`warning: ${decoder.warning}`);
    } catch (e) {
      console.error(`decoder: not found (${(e as Error).message})`);
    }
    return 0;
  }
  if (argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    console.log(generalHelp());
    return 0;
  }
  const inherited = argv[0] === 'worker' ? inheritedWorkerConfig() : null;
  if (inherited) {
    // An analysis worker process that a server or a worker node started (config handed over by the parent).
    const { runWorker } = await import('../jobs/worker');
    return await runWorker(inherited);
  }
  let name = 'serve';
  let rest = argv;
  if (argv[0] && !argv[0].startsWith('-')) {
    const two = `${argv[0]} ${argv[1] ?? ''}`;
    if (COMMANDS[two]) {
      name = two;
      rest = argv.slice(2);
    } else if (COMMANDS[argv[0]]) {
      name = argv[0];
      rest = argv.slice(1);
    } else {
      console.error(`unknown command "${argv.slice(0, 2).join(' ')}"; see vidq --help`);
      return 2;
    }
  }
  const cmd = COMMANDS[name]!;
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(commandHelp(cmd));
    return 0;
  }
  try {
    const options = { ...configParseOptions(), ...cmd.options };
    const { values, positionals } = parseArgs({
      args: valuesAttached(rest, options),
      options,
      strict: true,
      allowPositionals: true,
    });
    if (positionals.length && !cmd.positionals) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const config = loadConfig(
      cmd.shadows ? Object.fromEntries(Object.entries(values).filter(([k]) => !cmd.shadows!.includes(k))) : values,
    );
    return await cmd.run(values, config, positionals);
  } catch (e) {
    if (
      e instanceof UsageError ||
      e instanceof ConfigError ||
      (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      console.error(`${(e as Error).message}\nUsage: vidq ${cmd.usage}  (vidq ${name} --help)`);
      return 2;
    }
    if (e instanceof ClientError) {
      console.error(`vidq ${name}: ${e.message}`);
      return 1;
    }
    if (e instanceof ApiError) {
      console.error(e.message);
      return 1;
    }
    throw e;
  }
}
