/**
 * Builds the service's parts from a Config: the one place where they are wired together
 * (used by the HTTP server, the CLI and the tests).
 */
import { chmodSync, statSync } from 'node:fs';
import { AccountService } from './accounts/service';
import { createAnalyzers } from './analysis';
import { analysisAssets, embeddingFiles } from './analysis/assets/extract';
import type { Embedder } from './analysis/engines/embedder';
import { ThreadedEmbedder } from './analysis/engines/embedder-thread';
import { Limiter, ModelServerClient, modelLimitPerWorker } from './analysis/engines/model-server/client';
import { OpenAiEmbedder } from './analysis/engines/model-server/embedder-openai';
import { MomentReader } from './analysis/moment';
import { AnsweringService } from './answering/service';
import { analyzerNames, LIVE_ANALYZERS } from './analysis/analyzers';
import { ConfigError, type Config } from './config';
import { IndexService } from './indexes/service';
import { UploadGrants } from './ingest/grants';
import { IngestService } from './ingest/service';
import { Maintenance } from './jobs/maintenance';
import type { JobQueue } from './jobs/queue';
import { openJobQueue } from './jobs/queues';
import { PgBossJobQueue } from './jobs/pg-boss-queue';
import { ReanalyzeService, type StageInfo } from './jobs/reanalyze';
import { AnalysisSupervisor } from './jobs/supervisor';
import { createLogger, type Logger } from './log';
import { resolveBinaries } from './media/binaries';
import { MediaLinks } from './media/links';
import type { Catalog } from './storage/catalog';
import { type Db, openCatalog } from './storage/open';
import { DataDir, writeSecret } from './storage/files';
import { RecentVectors } from './search/question-vectors';
import { RetrievalCore } from './search/retrieval';
import { SearchService } from './search/service';
import { ExportService } from './exports/service';
import { WebhookService } from './webhooks/service';
import { PeopleService } from './people/service';
import { FlowService } from './flows';
import { type VideoPlace, VideoChanges } from './videos/changes';
import { VideoService } from './videos/service';
import { LiveService } from './live/service';
import { Heartbeat } from './cluster/heartbeat';
import { catalogIdentity, runningJobsOf } from './storage/repositories/nodes';
import { inProcessWindows } from './live/window';

export interface Service {
  config: Config;
  log: Logger;
  /**
   * The SQLite handle, for the tests that read the file directly; it throws on PostgreSQL. The
   * service itself reads and writes through `catalog` only.
   */
  readonly db: Db;
  /** The catalog, SQLite or PostgreSQL, through the dialect-neutral repositories (src/storage/catalog.ts). */
  catalog: Catalog;
  files: DataDir;
  accounts: AccountService;
  indexes: IndexService;
  /** A user's videos: the timeline and the files they may read. */
  videos: VideoService;
  ingest: IngestService;
  /** Signed upload URLs of POST /api-pre-upload (the hosted SDK's local files). */
  grants: UploadGrants;
  /** The one retrieval core behind answers and search. */
  retrieval: RetrievalCore;
  answering: AnsweringService;
  search: SearchService;
  exports: ExportService;
  webhooks: WebhookService;
  maintenance: Maintenance;
  links: MediaLinks;
  queue: JobQueue;
  /**
   * The analysis worker processes: built here, started by the server (`serve`) only. The CLI and
   * tests that build a Service without serving leave it unstarted; waking it then does nothing.
   */
  workers: AnalysisSupervisor;
  reanalyze: ReanalyzeService;
  /** People of each index (faces grouped by likeness). */
  people: PeopleService;
  /** The hosted API's search and flows (POST /search, POST /core/<name>). */
  flows: FlowService;
  /** Live streams (pushed or pulled), their analysis and alerts. */
  live: LiveService;
  /**
   * This process as a node of the cluster (issue 33): its row in `nodes` and its leases. Built
   * here, started by `serve` and `vidq worker` only (the CLI is no node).
   */
  heartbeat: Heartbeat;
  /**
   * The one entry point for "a video changed" (stored, removed, its analysis queued, progressed or
   * ended, a live window): every cache that holds something of a video subscribes to it (see
   * `changes`). `place` is needed when the row is already gone.
   */
  videoChanged(videoId: string, place?: VideoPlace): Promise<void>;
  /** Where caches subscribe to video changes (the listing, the vectors, the frame hashes). */
  changes: VideoChanges;
  /** Stops what runs and ends the catalog's connections (awaited by a process on its way out). */
  close(): Promise<void>;
}

export interface ServiceOptions {
  /** Where the analysis workers' log lines go (default: this process's stderr). */
  logSink?: (line: string) => void;
  /** The node's role (default: `all` with analysis workers, `api` without; `vidq worker`: `worker`). */
  role?: 'api' | 'worker' | 'all';
}

/**
 * The composition root: every part is built once, in dependency order, and given what it uses.
 * Nothing is patched in afterwards; the server only starts what is built here.
 */
/** Makes a folder of the server's own 0700 (tokens, secrets and videos are in it); warns when it cannot. */
function tightenOwnDir(dir: string, log: Logger): void {
  const mode = statSync(dir).mode & 0o777;
  if (!(mode & 0o077)) return;
  try {
    chmodSync(dir, 0o700);
    log.info('made the folder private to its owner (chmod 700)', { dir, was: mode.toString(8) });
  } catch (e) {
    log.warn(
      'the folder can be read by other users of this machine and could not be made private; run chmod 700 on it',
      {
        dir,
        mode: mode.toString(8),
        reason: (e as Error).message,
      },
    );
  }
}

export async function createService(
  config: Config,
  log: Logger = createLogger(config.logLevel),
  opts: ServiceOptions = {},
): Promise<Service> {
  // Storage.
  const files = new DataDir(config.dataDir, config.mediaDir);
  files.ensure();
  // ensure() makes new folders 0700 but leaves an existing one (made with mkdir, 0755) as it is:
  // the server tightens its own folders, and warns only when it cannot.
  for (const dir of new Set([config.dataDir, files.mediaRoot])) tightenOwnDir(dir, log);
  // A server's requests, its maintenance and its relay share the pool (the queue has its own).
  const opened = await openCatalog({ database: config.database, sqliteFile: files.dbFile, connections: 10 });
  const catalog = opened.catalog;
  // A shared media folder is claimed with the id the catalog keeps, so that every node agrees on it.
  const foreignMedia =
    files.mediaRoot === files.root
      ? null
      : files.claimMediaRoot(await catalogIdentity(catalog, files.localCatalogId()));
  if (foreignMedia) {
    await opened.close();
    throw new ConfigError(foreignMedia);
  }
  const ffprobe = async () => (await resolveBinaries(files.binDir)).ffprobe;
  const ffmpeg = async () => (await resolveBinaries(files.binDir)).ffmpeg;
  const links = new MediaLinks(files.secretKey(), config.mediaLinkTtlSec);
  // The one limit on this process's model-server requests (live windows, image queries, moderation).
  const modelLimiter = new Limiter(modelLimitPerWorker(config.modelConcurrency, config.analysisWorkers));

  // Accounts, indexes and their videos.
  const accounts = new AccountService(catalog);
  const indexes = new IndexService(catalog);
  const videos = new VideoService({ catalog });

  // Retrieval: one core for answers, search and every later caller, so the vectors are held once.
  // The question embedder loads on the first question (a few hundred ms), not at start-up, and runs
  // in a thread of its own so that embedding a question never holds up other requests.
  // The vectors of recent question texts are kept (a text asked again is not embedded again).
  const embedder = !analyzerNames(config.analyzers).includes('embeddings')
    ? null
    : new RecentVectors(
        config.embedder.type === 'openai'
          ? questionEmbedder(config, config.embedder)
          : new ThreadedEmbedder(() => embeddingFiles(files.assetsDir)),
      );
  const retrieval = new RetrievalCore({ catalog, embedder, dataDir: config.dataDir });
  // Every change to a video goes through here; the caches subscribe below, once all are built.
  const changes = new VideoChanges(catalog);
  const videoChanged = changes.changed;

  // Analysis: the queue and the workers that drain it.
  // SQLite: the jobs table; PostgreSQL: pg-boss (src/jobs/queues.ts).
  const queue = await openJobQueue(catalog, {
    databaseUrl: config.database,
    shortLaneSec: config.shortLaneSec,
    log: log.child({ part: 'queue' }),
  });
  const analysis = config.analysisWorkers > 0;
  // An API-only node of a cluster (`serve --workers 0`) runs no analysis but queues it for the
  // worker nodes; --analysis-workers 0 alone analyses nothing (videos are ready once stored).
  const queuesAnalysis = analysis || opts.role === 'api';
  const workers = new AnalysisSupervisor({
    config,
    queue,
    log,
    ...(opts.logSink && { logSink: opts.logSink }),
    onChanged: videoChanged,
  });
  const wake = () => workers.wake();
  // The stages the workers run, as the worker builds them (no model is loaded to know their names).
  let stageInfos: StageInfo[] | null = null;
  const stages = () =>
    (stageInfos ??= createAnalyzers(config, { modelLimiter }).map((a) => ({
      stage: a.stage,
      info: { kind: a.info.kind, name: a.info.name },
    })));
  const reanalyze = new ReanalyzeService({
    catalog,
    queue,
    stages,
    workers: config.analysisWorkers,
    userMaxQueued: config.userMaxQueued,
    onQueued: (id) => {
      // The listing shows the video as processing at once (the cache is per index).
      videoChanged(id);
      wake();
    },
  });

  // Ingest: uploads and downloads, stored and then queued for analysis.
  const ingest = new IngestService({
    catalog,
    config,
    files,
    indexes,
    log,
    ffprobe,
    ffmpeg,
    analysis: queuesAnalysis,
    enqueue: (tx, id, now) => queue.enqueueIn(tx, id, now),
    onStored: () => {
      if (analysis) wake();
    },
    videoChanged,
  });
  const grants = new UploadGrants({
    catalog,
    config,
    indexes,
    secret: files.secretKey(),
    admit: (u) => ingest.admit(u),
    tokenLive: (id) => accounts.isTokenLive(id),
  });
  const maintenance = new Maintenance({
    catalog,
    config,
    indexes,
    ingest,
    log,
    videoChanged,
    forgetIndex: (id) => retrieval.forgetIndex(id),
  });

  // Questions, search and flows.
  // Reads the text at a question's moment (OCR models load on the first such question).
  const moments = analyzerNames(config.analyzers).includes('ocr')
    ? new MomentReader({
        ffmpeg,
        ocrModelDir: async () => (await analysisAssets(files.assetsDir, ['ocr'])).ocrModelDir,
        log: log.child({ part: 'moments' }),
      })
    : null;
  const answering = new AnsweringService({
    catalog,
    config,
    accounts,
    indexes,
    links,
    files,
    embedder,
    retrieval,
    moments,
    // Read at question time: the live service is built below.
    streamClock: (videoId) => live.streamClock(videoId),
    log: log.child({ part: 'answering' }),
  });
  const search = new SearchService({ catalog, indexes, links, retrieval });
  const flows = new FlowService({
    catalog,
    config,
    files,
    indexes,
    retrieval,
    ffmpeg,
    log: log.child({ part: 'flows' }),
    modelLimiter,
  });

  // What is derived from the analysis: exports, people, webhooks.
  const exports = new ExportService({ catalog });
  const people = new PeopleService({ catalog, indexes, files, ffmpeg });
  const webhooks = new WebhookService({
    catalog,
    config,
    indexes,
    log: log.child({ part: 'webhooks' }),
    // PostgreSQL: the deliveries are jobs of the node's one pg-boss (its connections are shared).
    ...(queue instanceof PgBossJobQueue && { boss: queue.boss }),
  });

  // This process as a node: its leases decide which node runs each live stream and the cron.
  const heartbeat = new Heartbeat({
    catalog,
    role: opts.role ?? (analysis ? 'all' : 'api'),
    log: log.child({ part: 'cluster' }),
    jobs: () => runningJobsOf(catalog, workers.workerPrefixes()),
  });

  // Live streams.
  const live = new LiveService({
    catalog,
    config,
    files,
    indexes,
    log: log.child({ part: 'live' }),
    ffmpeg,
    hearsSpeech: analyzerNames(config.analyzers).includes('speech'),
    // A window's models run in the analysis workers (never on this process's request thread);
    // a server without workers runs them here.
    analyseWindow: analysis
      ? (w) => workers.analyseWindow(w)
      : inProcessWindows({
          catalog,
          videoDir: (id) => files.videoDir(id),
          ffmpeg,
          log: log.child({ part: 'live' }),
          analyzers: async () => {
            const names = analyzerNames(config.analyzers).filter((n) => LIVE_ANALYZERS.includes(n));
            const assets = await analysisAssets(files.assetsDir, names);
            return createAnalyzers(config, { assets, modelLimiter, live: true });
          },
        }),
    onChanged: videoChanged,
    ownership: heartbeat,
  });

  // The caches that hold something of a video, each dropping it when the video changes.
  changes.subscribe((_id, place) => place && indexes.invalidate(place.userId, place.indexId));
  changes.subscribe((id) => retrieval.invalidate(id));
  changes.subscribe((id) => flows.images.forget(id));

  return {
    config,
    log,
    get db(): Db {
      if (!opened.sqlite) throw new Error('service.db is the SQLite handle; this catalog is on PostgreSQL');
      return opened.sqlite;
    },
    catalog,
    files,
    accounts,
    indexes,
    videos,
    ingest,
    grants,
    retrieval,
    answering,
    search,
    exports,
    webhooks,
    maintenance,
    links,
    queue,
    workers,
    reanalyze,
    people,
    flows,
    live,
    heartbeat,
    videoChanged,
    changes,
    close: async () => {
      live.stop();
      // Deliveries in flight write their outcome: they end before the catalog and the queue close.
      await webhooks.stop();
      void embedder?.close?.();
      void moments?.close();
      void flows.close();
      void answering.generator?.close?.();
      await Promise.all([queue.close(), opened.close()]);
    },
  };
}

export interface DefaultUser {
  userId: string;
  token: string;
  tokenFile: string;
}

/**
 * On the first start with an empty database: a default user with unlimited credits, whose token is
 * printed once and written to a 0600 file in the data directory.
 */
export async function ensureDefaultUser(s: Service): Promise<DefaultUser | null> {
  if ((await s.accounts.userCount()) > 0) return null;
  const { user, token } = await s.accounts.createUser('default', null);
  writeSecret(s.files.defaultTokenFile, token + '\n');
  return { userId: user.id, token, tokenFile: s.files.defaultTokenFile };
}

/** Questions embedded by the model server that embedded the segments: one quick try, then keyword search alone. */
function questionEmbedder(config: Config, server: Extract<Config['embedder'], { type: 'openai' }>): Embedder {
  const client = new ModelServerClient({
    url: server.url,
    apiKey: server.apiKey,
    timeoutMs: Math.min(config.modelTimeoutMs, 10_000),
    retries: 1,
    backoffMs: 200,
    limiter: new Limiter(config.modelConcurrency),
  });
  return new OpenAiEmbedder(client, server.model);
}
