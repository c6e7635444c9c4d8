/**
 * The step after a video's analysis: its browser-playable copy, when its codec needs one. Runs
 * after the analysis (askable first); before it, `notePlaybackPending` marks a video that will
 * get one, so that its resource has `playback_src` (state "making") at `ready` and never offers a
 * browser only a file it cannot play. A failure is logged, the mark removed, the original plays.
 */
import { eq, sql } from 'drizzle-orm';
import type { Logger } from '../log';
import { makePlaybackCopy, planFor, playbackCopy } from '../media/playback';
import type { Db } from '../storage/db';
import type { DataDir } from '../storage/files';
import { videos } from '../storage/schema';

interface PlaybackDeps {
  db: Db;
  files: DataDir;
  ffmpeg: string;
  log: Logger;
  minFreeBytes?: number;
}

/** What `metadata.analysis.playback` holds. */
export type PlaybackNote = { state: 'making' } | { state: 'made'; made: 'remux' | 'transcode'; ms: number };

function setNote(db: Db, videoId: string, note: PlaybackNote | null): void {
  db.update(videos)
    .set({
      analysis: note
        ? sql`json_set(coalesce(${videos.analysis}, '{}'), '$.playback', json(${JSON.stringify(note)}))`
        : sql`json_remove(coalesce(${videos.analysis}, '{}'), '$.playback')`,
    })
    .where(eq(videos.id, videoId))
    .run();
}

/** Before the analysis: marks a video that needs a playable copy and has none yet. */
export async function notePlaybackPending(d: PlaybackDeps, videoId: string, signal?: AbortSignal): Promise<boolean> {
  const v = d.db.select().from(videos).where(eq(videos.id, videoId)).get();
  if (!v?.storagePath || playbackCopy(d.files.videoDir(v.id))) return false;
  try {
    const plan = await planFor(d.ffmpeg, d.files.abs(v.storagePath), v.fileType ?? '', signal);
    if (plan.kind === 'none') return false;
  } catch {
    return false;
  }
  setNote(d.db, videoId, { state: 'making' });
  return true;
}

export async function playbackStep(d: PlaybackDeps, videoId: string, signal?: AbortSignal): Promise<boolean> {
  const v = d.db.select().from(videos).where(eq(videos.id, videoId)).get();
  if (!v?.storagePath) return false;
  const pending = (v.analysis as { playback?: PlaybackNote } | null)?.playback?.state === 'making';
  // Not made: the mark goes, and the resource offers the original (the only thing there is).
  const notMade = () => {
    if (pending) setNote(d.db, videoId, null);
    return pending;
  };
  if (v.status === 'failed') return notMade();
  if (v.status !== 'ready') return false;
  // The copy must leave the free space uploads are held to; at ≤ 720p it is rarely larger than
  // the original, which is the room asked for.
  const room = (d.minFreeBytes ?? 0) + (v.sizeBytes ?? 0);
  if (d.files.freeBytes() < room) {
    d.log.warn('no playback copy: not enough free disk space', { video_id: videoId, needed_bytes: room });
    return notMade();
  }
  try {
    const r = await makePlaybackCopy(
      d.ffmpeg,
      d.files.abs(v.storagePath),
      d.files.videoDir(v.id),
      v.fileType ?? '',
      signal,
    );
    if (r.kind === 'none') return notMade();
    const note: PlaybackNote = { state: 'made', made: r.kind, ms: r.ms };
    setNote(d.db, videoId, note);
    d.log.info('playback copy made', { video_id: videoId, made: r.kind, ms: r.ms });
    return true;
  } catch (e) {
    if (signal?.aborted) return false;
    d.log.warn('playback copy failed', { video_id: videoId, reason: (e as Error).message });
    return notMade();
  }
}
