/**
 * Periodic upkeep, run by the cron plugin (and once at start-up):
 * purge indexes soft-deleted longer than the retention, fail resources stuck in a non-final state
 * (once per cluster), and refresh the resource-listing cache (each node its own).
 */
import type { Config } from '../config';
import { ApiError } from '../errors';
import type { IndexService } from '../indexes/service';
import type { IngestService } from '../ingest/service';
import type { Logger } from '../log';
import type { Catalog } from '../storage/catalog';
import { deleteIndexRow } from '../storage/repositories/indexes';
import {
  downloadsStartedBefore,
  failVideo,
  unfinishedUnqueuedSince,
  videoIdsOfIndex,
} from '../storage/repositories/videos';

export interface MaintenanceReport {
  purgedIndexes: number;
  failedStuck: number;
  refreshedListings: number;
}

export class Maintenance {
  constructor(
    private readonly d: {
      catalog: Catalog;
      config: Config;
      indexes: IndexService;
      /** Purged videos are removed as a removal by their owner would; downloads are stopped. */
      ingest: Pick<IngestService, 'deleteVideos' | 'cancel' | 'isBusy'>;
      log: Logger;
      /** A video was failed here: its cached listing goes (Service.videoChanged). */
      videoChanged: (videoId: string) => void;
      /** A purged index's search index (in memory and its saved lists) goes too. */
      forgetIndex?: (indexId: string) => void;
    },
  ) {}

  /**
   * `clusterWide`: purge and fail stuck work too, which one node of a cluster does (the holder of
   * the `cron:maintenance` lease, server.ts); every node refreshes its own listing cache.
   */
  async run(now = new Date(), clusterWide = true): Promise<MaintenanceReport> {
    const report = {
      purgedIndexes: clusterWide ? await this.purge(now) : 0,
      failedStuck: clusterWide ? await this.failStuck(now) : 0,
      refreshedListings: await this.d.indexes.refreshCache(),
    };
    if (report.purgedIndexes || report.failedStuck) this.d.log.info('maintenance', { ...report });
    return report;
  }

  async purge(now: Date): Promise<number> {
    const cutoff = new Date(now.getTime() - this.d.config.purgeAfterDays * 86_400_000);
    const doomed = await this.d.indexes.deletedBefore(cutoff);
    for (const idx of doomed) {
      await this.d.ingest.deleteVideos(idx.userId, idx.id, await videoIdsOfIndex(this.d.catalog, idx.id));
      await deleteIndexRow(this.d.catalog, idx.id);
      this.d.indexes.invalidate(idx.userId, idx.id);
      this.d.forgetIndex?.(idx.id);
    }
    return doomed.length;
  }

  async failStuck(now: Date): Promise<number> {
    const cutoff = new Date(now.getTime() - this.d.config.stuckAfterMinutes * 60_000);
    // Downloads this process is still running are covered too: one started before the cutoff has
    // outlived any sane deadline, and is stopped (its upload then removes its row and files).
    const overdue = (await downloadsStartedBefore(this.d.catalog, cutoff)).filter((id) =>
      this.d.ingest.cancel(
        id,
        new ApiError(
          504,
          `the download ran longer than ${this.d.config.stuckAfterMinutes} minutes (--stuck-after-minutes) and was stopped`,
        ),
      ),
    );
    // Waiting in line for a worker (behind long videos) is not being stuck.
    const stuck = (await unfinishedUnqueuedSince(this.d.catalog, cutoff)).filter((id) => !this.d.ingest.isBusy(id));
    for (const id of stuck) {
      await failVideo(
        this.d.catalog,
        id,
        `no progress for ${this.d.config.stuckAfterMinutes} minutes; the work was abandoned`,
        now,
      );
      this.d.videoChanged(id);
    }
    return stuck.length + overdue.length;
  }
}
