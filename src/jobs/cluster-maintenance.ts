/**
 * The cluster's maintenance on PostgreSQL (issue 33): pg-boss's schedule makes one job per cron
 * tick for the whole cluster (every node's timekeeper looks, one claims the tick), and one node's
 * worker takes it: purge the indexes deleted longer than the retention, fail stuck work, purge what
 * live streams keep beyond their retention. The job is kept with its report, or its reason when it
 * failed (retried twice, a minute apart). Each node still refreshes its own listing cache on its
 * own cron (server.ts). SQLite keeps the `cron:maintenance` lease (cluster/heartbeat.ts).
 */
import type { PgBoss } from 'pg-boss';
import type { Logger } from '../log';

export const MAINTENANCE_QUEUE = 'vidq-maintenance';

export interface ClusterMaintenance {
  /** Stops this node taking maintenance jobs (a run under way ends first). The schedule stays. */
  close(): Promise<void>;
}

/**
 * Schedules the maintenance on `cron` (every node writes the same schedule; the last start's
 * pattern and time zone win) and takes its jobs on this node. `pollSec`: how often this node looks
 * for a tick's job.
 */
export async function startClusterMaintenance(
  boss: PgBoss,
  cron: string,
  run: () => Promise<object>,
  log: Logger,
  { pollSec = 10, tz = Intl.DateTimeFormat().resolvedOptions().timeZone } = {},
): Promise<ClusterMaintenance> {
  await boss.createQueue(MAINTENANCE_QUEUE, {
    // One run at a time and one waiting: a run longer than the period does not pile up ticks.
    policy: 'stately',
    retryLimit: 2,
    retryDelay: 60,
    // A node that dies mid-run: another takes the job over once the heartbeat lapses.
    heartbeatSeconds: 60,
    expireInSeconds: 6 * 3600,
    // A tick nobody took within an hour is dropped: the next one does the same work.
    retentionSeconds: 3600,
    deleteAfterSeconds: 7 * 86400,
  });
  await boss.schedule(MAINTENANCE_QUEUE, cron, null, { tz });
  const id = await boss.work(MAINTENANCE_QUEUE, { pollingIntervalSeconds: pollSec }, async () => {
    try {
      return await run();
    } catch (e) {
      log.error('maintenance failed', { reason: (e as Error).message });
      throw e;
    }
  });
  return { close: () => boss.offWork(MAINTENANCE_QUEUE, { id, wait: true }) };
}
