/**
 * The step after a video's analysis: its browser-playable copy, when its codec needs one. Runs
 * after the video is ready (askable first); a failure is logged and leaves the original to play.
 */
import { eq, sql } from 'drizzle-orm';
import type { Logger } from '../log';
import { makePlaybackCopy } from '../media/playback';
import type { Db } from '../storage/db';
import type { DataDir } from '../storage/files';
import { videos } from '../storage/schema';

export async function playbackStep(
  d: { db: Db; files: DataDir; ffmpeg: string; log: Logger; minFreeBytes?: number },
  videoId: string,
  signal?: AbortSignal,
): Promise<boolean> {
  const v = d.db.select().from(videos).where(eq(videos.id, videoId)).get();
  if (!v?.storagePath || v.status !== 'ready') return false;
  // The copy must leave the free space uploads are held to; at ≤ 720p it is rarely larger than
  // the original, which is the room asked for.
  const room = (d.minFreeBytes ?? 0) + (v.sizeBytes ?? 0);
  if (d.files.freeBytes() < room) {
    d.log.warn('no playback copy: not enough free disk space', { video_id: videoId, needed_bytes: room });
    return false;
  }
  try {
    const r = await makePlaybackCopy(
      d.ffmpeg,
      d.files.abs(v.storagePath),
      d.files.videoDir(v.id),
      v.fileType ?? '',
      signal,
    );
    if (r.kind === 'none') return false;
    const note = { made: r.kind, ms: r.ms };
    d.db
      .update(videos)
      .set({ analysis: sql`json_set(coalesce(${videos.analysis}, '{}'), '$.playback', json(${JSON.stringify(note)}))` })
      .where(eq(videos.id, videoId))
      .run();
    d.log.info('playback copy made', { video_id: videoId, ...note });
    return true;
  } catch (e) {
    if (!signal?.aborted) d.log.warn('playback copy failed', { video_id: videoId, reason: (e as Error).message });
    return false;
  }
}
