/**
 * Periodic upkeep, run by the cron plugin (and once at start-up):
 * purge indexes soft-deleted longer than the retention, fail resources stuck in a non-final state,
 * and refresh the resource-listing cache.
 */
import { and, eq, inArray, lt, sql } from 'drizzle-orm';
import type { Config } from '../config';
import { ApiError } from '../errors';
import type { IndexService } from '../indexes/service';
import type { IngestService } from '../ingest/service';
import type { Logger } from '../log';
import type { Db } from '../storage/db';
import { deleteIndexRow } from '../storage/repositories/indexes';
import { videoIdsOfIndex } from '../storage/repositories/videos';
import { jobs, videos } from '../storage/schema';

export interface MaintenanceReport {
  purgedIndexes: number;
  failedStuck: number;
  refreshedListings: number;
}

export class Maintenance {
  constructor(
    private readonly d: {
      db: Db;
      config: Config;
      indexes: IndexService;
      ingest: IngestService;
      log: Logger;
      isBusy: (videoId: string) => boolean;
    },
  ) {}

  run(now = new Date()): MaintenanceReport {
    const report = {
      purgedIndexes: this.purge(now),
      failedStuck: this.failStuck(now),
      refreshedListings: this.d.indexes.refreshCache(),
    };
    if (report.purgedIndexes || report.failedStuck) this.d.log.info('maintenance', { ...report });
    return report;
  }

  purge(now: Date): number {
    const cutoff = new Date(now.getTime() - this.d.config.purgeAfterDays * 86_400_000);
    const doomed = this.d.indexes.deletedBefore(cutoff);
    for (const idx of doomed) {
      this.d.ingest.deleteVideos(idx.userId, idx.id, videoIdsOfIndex(this.d.db, idx.id));
      deleteIndexRow(this.d.db, idx.id);
      this.d.indexes.invalidate(idx.userId, idx.id);
    }
    return doomed.length;
  }

  failStuck(now: Date): number {
    const cutoff = new Date(now.getTime() - this.d.config.stuckAfterMinutes * 60_000);
    // Downloads this process is still running are covered too: one started before the cutoff has
    // outlived any sane deadline, and is stopped (its upload then removes its row and files).
    const overdue = this.d.db
      .select({ id: videos.id })
      .from(videos)
      .where(and(eq(videos.status, 'downloading'), lt(videos.uploadedAt, cutoff)))
      .all()
      .filter((v) =>
        this.d.ingest.cancel(
          v.id,
          new ApiError(
            504,
            `the download ran longer than ${this.d.config.stuckAfterMinutes} minutes (--stuck-after-minutes) and was stopped`,
          ),
        ),
      );
    const stuck = this.d.db
      .select({ id: videos.id, userId: videos.userId, indexId: videos.indexId })
      .from(videos)
      // Waiting in line for a worker (behind long videos) is not being stuck.
      .where(
        and(
          inArray(videos.status, ['queued', 'downloading', 'processing']),
          lt(videos.updatedAt, cutoff),
          sql`${videos.id} NOT IN (SELECT ${jobs.videoId} FROM ${jobs} WHERE ${jobs.state} = 'pending')`,
        ),
      )
      .all()
      .filter((v) => !this.d.isBusy(v.id));
    for (const v of stuck) {
      this.d.db
        .update(videos)
        .set({
          status: 'failed',
          stage: 'failed',
          error: `no progress for ${this.d.config.stuckAfterMinutes} minutes; the work was abandoned`,
          updatedAt: now,
        })
        .where(eq(videos.id, v.id))
        .run();
      this.d.indexes.invalidate(v.userId, v.indexId);
    }
    return stuck.length + overdue.length;
  }
}
