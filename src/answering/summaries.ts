/**
 * What each video's detections add up to (the seconds each object label spans, and when it is first
 * seen), kept in memory per video. Answers over a whole index read these instead of every object
 * span of every video: a "not found" says what the index does show, and a question about a label
 * looks only at the videos that have it. A video's entry is computed on first use and dropped when
 * its segments change (the service's videoChanged: analysis progressed, re-analysed, removed).
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../storage/db';
import type { Video } from '../storage/schema';

interface LabelTotal {
  label: string;
  seconds: number;
  /** Start of its earliest span. */
  first: number;
}

/** Videos read from the database per statement. */
const CHUNK = 500;

export class VideoSummaries {
  private readonly labels = new Map<string, LabelTotal[]>();

  constructor(private readonly db: Db) {}

  /** The video's segments changed or it is gone. */
  invalidate(videoId: string): void {
    this.labels.delete(videoId);
  }

  /**
   * Seconds each object label spans in these whole videos (spans summed whole), longest first; of
   * equal ones the first seen first. The same as the evidence finder's labelSeconds on a scope
   * without a time window.
   */
  labelSeconds(videos: Video[], limit: number): { label: string; seconds: number }[] {
    const sum = new Map<string, LabelTotal>();
    for (const v of this.load(videos)) {
      for (const l of this.labels.get(v.id) ?? []) {
        const s = sum.get(l.label);
        if (!s) sum.set(l.label, { ...l });
        else {
          s.seconds += l.seconds;
          s.first = Math.min(s.first, l.first);
        }
      }
    }
    return [...sum.values()]
      .sort((a, b) => b.seconds - a.seconds || a.first - b.first || (a.label < b.label ? -1 : 1))
      .slice(0, limit)
      .map(({ label, seconds }) => ({ label, seconds }));
  }

  /** The videos among these in which the object detector saw `label`. */
  withLabel(videos: Video[], label: string): Video[] {
    return this.load(videos).filter((v) => this.labels.get(v.id)!.some((l) => l.label === label));
  }

  /** The videos, with every one's entry loaded. */
  private load(videos: Video[]): Video[] {
    const missing = videos.filter((v) => !this.labels.has(v.id)).map((v) => v.id);
    for (let i = 0; i < missing.length; i += CHUNK) {
      const ids = missing.slice(i, i + CHUNK);
      const rows = this.db.all<{ video_id: string; label: string; seconds: number; first: number }>(
        sql`SELECT video_id, text AS label, sum("end" - start) AS seconds, min(start) AS first FROM segments
            WHERE video_id IN (SELECT value FROM json_each(${JSON.stringify(ids)})) AND kind = 'object'
            GROUP BY video_id, text`,
      );
      for (const id of ids) this.labels.set(id, []);
      for (const r of rows) this.labels.get(r.video_id)!.push({ label: r.label, seconds: r.seconds, first: r.first });
    }
    return videos;
  }
}
