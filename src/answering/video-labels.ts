/**
 * Which object labels each video's detections hold, kept in memory per video: a question about a
 * label over a whole index looks only at the videos that have it (and none at all for a label no
 * video has), instead of every video's spans. A video's entry is computed on first use and dropped
 * when its segments change (the service's videoChanged: analysis progressed, re-analysed, removed).
 * (The seconds per label, for "not found" answers, are kept per video by the evidence finder.)
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../storage/db';
import type { Video } from '../storage/schema';

/** Videos read from the database per statement. */
const CHUNK = 500;

export class VideoLabels {
  private readonly labels = new Map<string, Set<string>>();

  constructor(private readonly db: Db) {}

  /** The video's segments changed or it is gone. */
  invalidate(videoId: string): void {
    this.labels.delete(videoId);
  }

  /** The videos among these in which the object detector saw `label`. */
  withLabel(videos: Video[], label: string): Video[] {
    return this.load(videos).filter((v) => this.labels.get(v.id)!.has(label));
  }

  /** The videos, with every one's entry loaded. */
  private load(videos: Video[]): Video[] {
    const missing = videos.filter((v) => !this.labels.has(v.id)).map((v) => v.id);
    for (let i = 0; i < missing.length; i += CHUNK) {
      const ids = missing.slice(i, i + CHUNK);
      const rows = this.db.all<{ video_id: string; label: string }>(
        sql`SELECT DISTINCT video_id, text AS label FROM segments
            WHERE video_id IN (SELECT value FROM json_each(${JSON.stringify(ids)})) AND kind = 'object'`,
      );
      for (const id of ids) this.labels.set(id, new Set());
      for (const r of rows) this.labels.get(r.video_id)!.add(r.label);
    }
    return videos;
  }
}
