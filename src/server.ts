/**
 * `serve`: opens the data directory, recovers from an unclean stop, creates the default user on
 * first start, and serves HTTP with the maintenance cron.
 */
import { cron } from '@elysiajs/cron';
import { analyzerNames } from './analysis/analyzers';
import { isLoopbackHost, type Config } from './config';
import { createHttpApp } from './http/app';
import { withOllama } from './analysis/engines/model-server/ollama';
import { DEFAULT_WHISPER_MODEL, whisperModelPresent } from './analysis/engines/stt';
import { redoInterruptedCopies } from './jobs/playback-step';
import { MAINTENANCE_LEASE } from './cluster/heartbeat';
import { startClusterMaintenance } from './jobs/cluster-maintenance';
import { PgBossJobQueue } from './jobs/pg-boss-queue';
import { startChangeRelay } from './cluster/relay';
import { createLogger } from './log';
import { resolveBinaries } from './media/binaries';
import { decoderInfo } from './media/decoder';
import { createService, ensureDefaultUser, type Service } from './service';

export interface RunningServer {
  service: Service;
  url: string;
  port: number;
  /** Bun's development mode (its error page shows paths and source): always false. */
  development: boolean;
  stop(): Promise<void>;
}

/**
 * `out` gets what a person starting the server should see (stdout); `logSink` every log line,
 * the analysis workers' included (default: stderr).
 */
export async function startServer(
  config: Config,
  out: (line: string) => void = (l) => console.log(l),
  logSink?: (line: string) => void,
  opts: { role?: 'api' | 'all' } = {},
): Promise<RunningServer> {
  const log = createLogger(config.logLevel, {}, logSink);
  // --ollama: captioner, generator and embedder picked from its installed models (issue 11).
  config = await withOllama(config, out);
  const service = await createService(config, log, { ...(logSink && { logSink }), ...opts });
  // Webhook deliveries (the outbox survives restarts: pending ones go out now). Started before the
  // recovery so that this start's --webhook-url is recorded before the videos a crash cut off are
  // marked failed (their video.failed events take the URL recorded then).
  await service.webhooks.start();
  // This process joins the cluster's node list (removing a dead predecessor of this host first).
  const node = service.heartbeat;
  await node.start();
  // The recovery of an unclean stop (interrupted downloads failed, unknown media folders deleted,
  // running jobs put back) assumes no other process works on this catalog: with another node alive
  // (`vidq worker`, a second API node) it would take their work in progress for leftovers. It is
  // left to a start that finds itself alone.
  const others = (await node.nodes()).filter((n) => n.id !== node.id);
  if (others.length)
    log.info('other nodes work on this catalog; the recovery of an unclean stop is left to a start without them', {
      nodes: others.length,
    });
  else {
    const recovered = await service.ingest.recover();
    if (recovered.interrupted || recovered.orphans) log.warn('recovered from an unclean stop', { ...recovered });
    const resumed = await service.queue.resetRunning();
    const requeued = await service.queue.requeueUnqueued();
    if (resumed || requeued.length)
      log.info('resuming interrupted analysis', { jobs: resumed, requeued: requeued.length });
  }
  // One node per tick does the cluster's maintenance, each refreshes its own listing cache. On
  // PostgreSQL pg-boss's schedule makes one job per tick for the cluster (jobs/cluster-maintenance.ts);
  // on SQLite the holder of the lease does it.
  const boss = service.queue instanceof PgBossJobQueue ? service.queue.boss : null;
  if (!boss) await node.want(MAINTENANCE_LEASE, {}, true);
  const lead = () => !boss && node.holds(MAINTENANCE_LEASE);
  // Videos that other nodes store or analyse leave this node's caches too.
  const relay = await startChangeRelay({
    catalog: service.catalog,
    changes: service.changes,
    heartbeat: node,
    database: config.database,
    log,
  });
  // At start the cluster-wide part runs at once when this node has it (PostgreSQL: when it is
  // alone, as the recovery above), so that a purge cut off by a crash ends before the first request.
  await service.maintenance.run(new Date(), boss ? !others.length : lead());
  const clusterMaintenance = boss
    ? await startClusterMaintenance(
        boss,
        config.maintenanceCron,
        async () => ({ ...(await service.maintenance.run(new Date(), true)), live: await service.live.purge() }),
        log,
      )
    : null;
  // Copies the last stop cut off are made again; a worker started now makes copies only for its
  // own jobs, which are not ready videos.
  const copies = new AbortController();
  if (!others.length)
    redoInterruptedCopies(
      {
        catalog: service.catalog,
        files: service.files,
        log,
        minFreeBytes: config.minFreeBytes,
        ffmpeg: async () => (await resolveBinaries(service.files.binDir)).ffmpeg,
      },
      service.videoChanged,
      copies.signal,
    ).catch((e) => log.error('playback copies not made again', { reason: (e as Error).message }));
  service.workers.start();
  // Another embedding model than the one that embedded the index: redo the vectors (issue 11).
  const reembed = config.analysisWorkers > 0 ? await service.reanalyze.reembedChanged() : [];
  if (reembed.length) log.info('re-embedding videos with the configured embedding model', { videos: reembed.length });

  const first = await ensureDefaultUser(service);
  if (first) {
    out(`Created the default user ${first.userId} (unlimited credits).`);
    out(`Its token, shown only this once, is also saved in ${first.tokenFile} (mode 0600):`);
    out(`  ${first.token}`);
  }
  // Deliveries to --webhook-url are signed with each user's secret: the default user's is shown
  // here, once, on the start that creates the user (issue 25); `vidq user create` shows the others'.
  if (config.webhookUrl && first) {
    const made = await service.webhooks.ensureSecret(first.userId);
    if (made.created) {
      out('Deliveries to --webhook-url are signed with its webhook secret, shown only this once:');
      out(`  webhook secret: ${made.secret}`);
    }
  }

  const app = createHttpApp(service, { loopback: isLoopbackHost(config.host) }).use(
    cron({
      name: 'maintenance',
      pattern: config.maintenanceCron,
      async run() {
        try {
          const clusterWide = lead();
          await service.maintenance.run(new Date(), clusterWide);
          if (clusterWide) await service.live.purge();
        } catch (e) {
          log.error('maintenance failed', { reason: (e as Error).message });
        }
      },
    }),
  );
  app.listen({ hostname: config.host, port: config.port });
  const port = app.server!.port as number;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  const media = config.mediaDir === config.dataDir ? '' : `; media: ${config.mediaDir}`;
  out(`vidq listening on ${url} (data: ${config.dataDir}${media}; API docs: ${url}/swagger)`);
  const speech = speechLine(config);
  if (speech) out(speech);
  // Not found is said where ffmpeg is first needed; here only an old one is.
  const decoder = await decoderInfo(service.files.binDir).catch(() => null);
  if (decoder?.warning) {
    out(`Warning: ${decoder.warning}.`);
    log.warn('the decoder is not of a maintained FFmpeg line', {
      ffmpeg: decoder.ffmpeg.version,
      ffprobe: decoder.ffprobe.version,
      source: decoder.source,
    });
  }
  // The search indexes of large media indexes build in the background (until then, exact search).
  service.retrieval.warmUp().catch((e) => log.error('search index build failed', { reason: (e as Error).message }));
  // Live streams that were running before a stop resume (pulled sources reconnect).
  await service.live.start();
  if (!config.allowedHosts && (config.host === '0.0.0.0' || config.host === '::' || config.host === '[::]')) {
    log.warn(
      'listening on every interface, but only loopback Host names are answered (421 otherwise); list the names clients use in --allowed-hosts',
      { host: config.host },
    );
  }
  log.debug('started', { port });

  return {
    service,
    url,
    port,
    development: app.server!.development,
    async stop() {
      service.live.stop();
      copies.abort();
      await app.stop(true);
      await service.workers.stop();
      (app.store as { cron?: Record<string, { stop(): void }> }).cron?.maintenance?.stop();
      await clusterMaintenance?.close();
      await relay.close();
      await node.stop();
      await service.close();
    },
  };
}

/**
 * One line at start-up: which speech engine transcribes, and, when none does (the default until a
 * Whisper model is pulled), the one command that adds transcripts. Null when speech is not analysed.
 */
export function speechLine(config: Config): string | null {
  if (config.analysisWorkers === 0 || !analyzerNames(config.analyzers).includes('speech')) return null;
  const stt = config.stt;
  if (stt.type === 'openai')
    return `Speech: transcribed by the model server at ${stt.url} (${stt.model || 'its default model'}).`;
  const model = (stt.type !== 'none' && stt.model) || DEFAULT_WHISPER_MODEL;
  if (stt.type === 'whisper' || (stt.type === 'auto' && whisperModelPresent(config.modelsDir, model)))
    return `Speech: transcribed here with Whisper (${model}).`;
  const pull = '`vidq models pull` (from a clone: `npx vidq models pull`) once, online';
  if (stt.type === 'none')
    return `Speech: not transcribed (--stt none); to add transcripts, run ${pull}, and start with --stt auto.`;
  return `Speech: not transcribed (no Whisper model in ${config.modelsDir}); to add transcripts, run ${pull}, and start again.`;
}
