/**
 * `vidq worker` (issue 33): an analysis node. No HTTP: the analysis worker processes (the same
 * supervisor `serve` runs) claim jobs from the shared queue, read the originals from the media
 * folder, and write findings and frames; the heartbeat puts the node in the cluster's list with
 * its running jobs. Live windows, uploads, questions and the maintenance cron stay on the API
 * nodes.
 *
 * On PostgreSQL (--database) with a shared --media-dir, on any machine; on the embedded SQLite file,
 * beside a `serve` of the same data directory (more analysis processes, started and stopped on
 * their own).
 */
import { ConfigError, type Config } from '../config';
import { createLogger } from '../log';
import { createService } from '../service';
import { startChangeRelay } from './relay';

export interface WorkerNode {
  id: string;
  stop(): Promise<void>;
}

/** Starts the node; `out` gets what a person starting it should see. */
export async function startWorkerNode(
  config: Config,
  out: (line: string) => void = (l) => console.log(l),
  logSink?: (line: string) => void,
): Promise<WorkerNode> {
  if (config.analysisWorkers < 1)
    throw new ConfigError('vidq worker runs analysis: --analysis-workers (--workers) must be 1 or more');
  const log = createLogger(config.logLevel, { role: 'worker-node' }, logSink);
  const service = await createService(config, log, { role: 'worker', ...(logSink && { logSink }) });
  const node = service.heartbeat;
  await node.start();
  // What this node's analysis changes reaches the API nodes' caches (PostgreSQL: NOTIFY; on the
  // SQLite file the API node reads the changed videos itself, so this relay only reads).
  const relay = await startChangeRelay({
    catalog: service.catalog,
    changes: service.changes,
    heartbeat: node,
    database: config.database,
    log,
    readOthers: false,
  });
  service.workers.start();
  const media = config.mediaDir === config.dataDir ? '' : `; media: ${config.mediaDir}`;
  out(
    `vidq worker node ${node.id} on ${node.host}: ${config.analysisWorkers} analysis process(es) (catalog: ${service.catalog.dialect}, data: ${config.dataDir}${media})`,
  );
  let stopping: Promise<void> | null = null;
  return {
    id: node.id,
    stop() {
      stopping ??= (async () => {
        await service.workers.stop();
        await relay.close();
        await node.stop();
        await service.close();
      })();
      return stopping;
    },
  };
}
