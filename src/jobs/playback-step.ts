/**
 * The step beside a video's analysis: its browser-playable copy, when its codec needs one. Before
 * the analysis, `notePlaybackPending` marks a video that will get one, so that its resource has
 * `playback_src` (state "making") at `ready` and never offers a browser only a file it cannot play.
 * `startPlaybackCopy` then makes the copy while the video is analysed (its one x264 thread uses the
 * time the analysis leaves a core idle, instead of holding the job slot after `ready`);
 * `playbackStep` publishes it once the analysis is over (or makes it then, when it was not started).
 * A failed video loses its mark and its copy; a failed copy is logged, the mark removed, the
 * original plays.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log';
import { makePlaybackCopy, planFor, playbackCopy, PLAYBACK_FILE, type PlaybackPlan } from '../media/playback';
import type { Catalog } from '../storage/catalog';
import type { DataDir } from '../storage/files';
import { readyVideosWithNoteState, setAnalysisNote, videoToAnalyse } from '../storage/repositories/analysis';

interface PlaybackDeps {
  catalog: Catalog;
  files: DataDir;
  ffmpeg: string;
  log: Logger;
  minFreeBytes?: number;
}

/** What `metadata.analysis.playback` holds. */
export type PlaybackNote = { state: 'making' } | { state: 'made'; made: 'remux' | 'transcode'; ms: number };

const setNote = (c: Catalog, videoId: string, note: PlaybackNote | null): Promise<void> =>
  setAnalysisNote(c, videoId, 'playback', note);

/** Before the analysis: marks a video that needs a playable copy and has none yet. */
export async function notePlaybackPending(d: PlaybackDeps, videoId: string, signal?: AbortSignal): Promise<boolean> {
  const v = await videoToAnalyse(d.catalog, videoId);
  if (!v?.storagePath || playbackCopy(d.files.videoDir(v.id))) return false;
  try {
    const plan = await planFor(d.ffmpeg, d.files.abs(v.storagePath), v.fileType ?? '', signal);
    if (plan.kind === 'none') return false;
  } catch {
    return false;
  }
  await setNote(d.catalog, videoId, { state: 'making' });
  return true;
}

/** What a copy started beside the analysis came to: what was done, why it failed, or null when none was started. */
export type EarlyCopy = Promise<(PlaybackPlan & { ms: number }) | Error | null>;

/** The copy must leave the free space uploads are held to; at ≤ 720p it is rarely larger than the original. */
const roomFor = (d: PlaybackDeps, sizeBytes: number | null) => (d.minFreeBytes ?? 0) + (sizeBytes ?? 0);

/**
 * Starts the copy of a marked video ("making") beside its analysis; null when there is nothing to
 * start (no mark, or too little disk: `playbackStep` then says so). Stop it with `signal`.
 */
export async function startPlaybackCopy(d: PlaybackDeps, videoId: string, signal: AbortSignal): EarlyCopy {
  const v = await videoToAnalyse(d.catalog, videoId);
  if (!v?.storagePath || (v.analysis as { playback?: PlaybackNote } | null)?.playback?.state !== 'making') return null;
  if (d.files.freeBytes() < roomFor(d, v.sizeBytes)) return null;
  return makePlaybackCopy(d.ffmpeg, d.files.abs(v.storagePath), d.files.videoDir(v.id), v.fileType ?? '', signal).catch(
    (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
  );
}

/**
 * After the analysis: publishes the copy `early` made (a failed video's is deleted), or makes it
 * now. True when the resource changed.
 */
export async function playbackStep(
  d: PlaybackDeps,
  videoId: string,
  signal?: AbortSignal,
  early?: EarlyCopy | null,
): Promise<boolean> {
  const made = early ? await early : null;
  const v = await videoToAnalyse(d.catalog, videoId);
  if (!v?.storagePath) return false;
  const pending = (v.analysis as { playback?: PlaybackNote } | null)?.playback?.state === 'making';
  // Not made: the mark goes, and the resource offers the original (the only thing there is).
  const notMade = async () => {
    if (pending) await setNote(d.catalog, videoId, null);
    return pending;
  };
  if (v.status === 'failed') {
    // Made beside an analysis that failed: a failed video has no copy.
    if (made && !(made instanceof Error)) rmSync(join(d.files.videoDir(v.id), PLAYBACK_FILE), { force: true });
    return notMade();
  }
  if (v.status !== 'ready') return false;
  const room = roomFor(d, v.sizeBytes);
  if (!made && d.files.freeBytes() < room) {
    d.log.warn('no playback copy: not enough free disk space', { video_id: videoId, needed_bytes: room });
    return notMade();
  }
  try {
    if (made instanceof Error) throw made;
    const r =
      made ??
      (await makePlaybackCopy(d.ffmpeg, d.files.abs(v.storagePath), d.files.videoDir(v.id), v.fileType ?? '', signal));
    if (r.kind === 'none') return notMade();
    const note: PlaybackNote = { state: 'made', made: r.kind, ms: r.ms };
    await setNote(d.catalog, videoId, note);
    d.log.info('playback copy made', { video_id: videoId, made: r.kind, ms: r.ms });
    return true;
  } catch (e) {
    if (signal?.aborted) return false;
    d.log.warn('playback copy failed', { video_id: videoId, reason: (e as Error).message });
    return notMade();
  }
}

/**
 * At start-up: a ready video still marked "making" lost its copy to the last stop (or a crash) of
 * the worker making it, since the copy can outlast `ready` and no job is left to retry it. Makes
 * each again, one at a time (one ffmpeg beside the server), telling `onChange` as each is done;
 * returns how many there were. Call before any worker can start a copy of its own.
 */
export async function redoInterruptedCopies(
  d: Omit<PlaybackDeps, 'ffmpeg'> & { ffmpeg: () => Promise<string> },
  onChange: (videoId: string) => void,
  signal?: AbortSignal,
): Promise<number> {
  const ids = await readyVideosWithNoteState(d.catalog, 'playback', 'making');
  if (!ids.length) return 0;
  d.log.info('making the playback copies a stop interrupted', { videos: ids.length });
  const deps = { ...d, ffmpeg: await d.ffmpeg() };
  for (const id of ids) {
    if (signal?.aborted) break;
    if (await playbackStep(deps, id, signal)) onChange(id);
  }
  return ids.length;
}
