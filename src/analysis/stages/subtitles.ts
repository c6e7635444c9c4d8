/**
 * Subtitles that come with the video: every text track in the file and the subtitle file fetched
 * with it (`subtitles_url`), stored as `transcript` segments with the cues' exact times and
 * `extra.source: "subtitles"`. They are an exact transcript, so they answer "what is said" better
 * than speech recognition. Bitmap tracks are listed in the summary (the resource's
 * metadata.analysis.subtitles) as present but not read.
 *
 * Its segments share the `transcript` kind with the speech stage, which replaces all of that kind
 * when it stores: so this stage owns no kind and replaces only its own rows (source = subtitles),
 * and comes after speech in the pipeline.
 */
import { stripControls } from '../../util/text';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { replaceSubtitleTranscripts } from '../../storage/repositories/analysis';
import { probeSubtitles, readCues, type SubtitleTrack } from '../../media/subtitles';
import { defineAnalyzer } from '../descriptor';
import type { Analyzer, NewSegment, StageContext, StageResult } from '../contracts';

/** Names of the subtitle file stored beside the video (from `subtitles_url`). */
export const SUBTITLE_FILES = ['subtitles.srt', 'subtitles.vtt'] as const;

export class SubtitlesAnalyzer implements Analyzer {
  readonly stage = 'analyzing:subtitles';
  readonly kinds = [] as const;
  readonly info = { kind: 'subtitles', name: 'ffmpeg subtitle tracks' };
  // A demux of the subtitle streams: next to nothing beside decoding.
  readonly weight = 0.05;
  readonly concurrent = true;

  constructor(private readonly ffprobe: () => Promise<string>) {}

  async run(ctx: StageContext): Promise<StageResult> {
    const { video } = ctx;
    const { segments: segs, summary } = await this.read(ctx);
    return {
      summary,
      apply: (tx) => replaceSubtitleTranscripts(tx, video.id, segs),
    };
  }

  /** The cues of every text track and of the stored subtitle file, and what was found. */
  async read(ctx: StageContext): Promise<{ segments: NewSegment[]; summary: Record<string, unknown> }> {
    const { video } = ctx;
    const tracks = await probeSubtitles({ ffprobe: await this.ffprobe(), ffmpeg: ctx.ffmpeg }, video.path, ctx.signal);
    const segs: NewSegment[] = [];
    const listed: (SubtitleTrack & { cues?: number; error?: string })[] = [];
    for (const tr of tracks) {
      if (!tr.text) {
        listed.push({ ...tr, cues: 0 });
        continue;
      }
      try {
        const cues = await readCues(ctx.ffmpeg, video.path, tr.index, ctx.signal);
        listed.push({ ...tr, cues: cues.length });
        for (const c of cues)
          segs.push(segment(c, { track: tr.index, codec: tr.codec, language: tr.language, title: tr.title }));
      } catch (e) {
        // One broken track should not cost the others (or the video).
        if (ctx.signal.aborted) throw e;
        listed.push({ ...tr, error: (e as Error).message });
        ctx.log.warn('subtitle track unreadable', { video_id: video.id, track: tr.index, error: (e as Error).message });
      }
    }
    let file: { name: string; cues: number } | undefined;
    for (const name of SUBTITLE_FILES) {
      const path = join(video.dir, name);
      if (!existsSync(path)) continue;
      const cues = await readCues(ctx.ffmpeg, path, undefined, ctx.signal);
      file = { name, cues: cues.length };
      for (const c of cues) segs.push(segment(c, { file: name }));
    }
    ctx.progress(1);
    segs.sort((a, b) => a.start - b.start);
    return {
      segments: segs,
      summary: {
        engine: this.info.name,
        tracks: listed.map((t) => ({
          index: t.index,
          codec: t.codec,
          ...(t.language && { language: t.language }),
          ...(t.title && { title: t.title }),
          read: t.text && !t.error,
          ...(t.cues !== undefined && { cues: t.cues }),
          ...(t.error && { error: t.error }),
        })),
        ...(file && { file }),
        segments: segs.length,
      },
    };
  }
}

function segment(c: { start: number; end: number; text: string }, from: Record<string, unknown>): NewSegment {
  const extra: Record<string, unknown> = { source: 'subtitles' };
  for (const [k, v] of Object.entries(from)) if (v !== undefined) extra[k] = v;
  // A cue's text may carry terminal controls (ESC]52;… writes a terminal's clipboard): stored without.
  return { kind: 'transcript', start: c.start, end: c.end, text: stripControls(c.text), confidence: 1, extra };
}

/** The video's own subtitle tracks (and a subtitles file beside it), as transcripts. */
export const subtitlesDescriptor = defineAnalyzer({
  name: 'subtitles',
  options: {},
  engines: {},
  listed: true,
  live: false,
  reanalyzable: false,
  // The same binaries as the worker's ffmpeg.
  create: (_c, setup) => new SubtitlesAnalyzer(setup.ffprobe),
});
