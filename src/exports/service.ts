/**
 * GET /videos/{file_id}/transcript.vtt|.srt and /insights.json: a video's analysis in files people
 * keep. Only the owner's video in an active index is found; anything else is 404 (ids never leak).
 */
import { notFound } from '../errors';
import type { Catalog } from '../storage/catalog';
import type { User, Video } from '../storage/rows';
import { appearancesInVideo } from '../storage/repositories/people';
import { activeVideoOf, segmentsByKind, transcriptCues } from '../storage/repositories/videos';
import { toSrt, toVtt, type Cue } from './formats';

export interface Insights {
  video_id: string;
  index_id: string;
  file_name: string;
  status: string;
  metadata: Record<string, unknown>;
  /** Per analyzer: the engine used and what it found (as in the resource's metadata.analysis). */
  engines: Record<string, unknown>;
  /** The people of the index seen in this video (faces grouped across the index), when any. */
  people: { person_id: string; name: string | null; appearances: { start: number; end: number }[] }[];
  /** Every segment, grouped by kind, each in time order. */
  segments: Record<
    string,
    { start: number; end: number; text: string; confidence: number | null; extra?: Record<string, unknown> }[]
  >;
}

export class ExportService {
  constructor(private readonly d: { catalog: Catalog }) {}

  /** The owner's video in an active index, or 404. */
  async video(user: User, fileId: string): Promise<Video> {
    const video = await activeVideoOf(this.d.catalog, user.id, fileId);
    if (!video) throw notFound('no such video');
    return video;
  }

  /** Subtitles from the transcript segments; 404 when the video has none. */
  async transcript(user: User, fileId: string, format: 'vtt' | 'srt'): Promise<{ video: Video; text: string }> {
    const { video, cues } = await this.transcriptCues(user, fileId);
    return { video, text: format === 'vtt' ? toVtt(cues) : toSrt(cues) };
  }

  /** The transcript's cues in time order (the MCP tool get_transcript); 404 when the video has none. */
  async cues(user: User, fileId: string): Promise<Cue[]> {
    return (await this.transcriptCues(user, fileId)).cues;
  }

  private async transcriptCues(user: User, fileId: string): Promise<{ video: Video; cues: Cue[] }> {
    const video = await this.video(user, fileId);
    const cues: Cue[] = await transcriptCues(this.d.catalog, video.id);
    if (cues.length === 0) throw notFound(noTranscriptReason(video));
    return { video, cues };
  }

  private async peopleOf(videoId: string): Promise<Insights['people']> {
    const rows = await appearancesInVideo(this.d.catalog, videoId);
    const byId = new Map<string, Insights['people'][number]>();
    for (const r of rows) {
      let p = byId.get(r.id);
      if (!p) byId.set(r.id, (p = { person_id: r.id, name: r.name, appearances: [] }));
      p.appearances.push({ start: r.start, end: r.end });
    }
    return [...byId.values()];
  }

  async insights(user: User, fileId: string): Promise<Insights> {
    const v = await this.video(user, fileId);
    const rows = await segmentsByKind(this.d.catalog, v.id);
    const grouped: Insights['segments'] = {};
    for (const r of rows)
      (grouped[r.kind] ??= []).push({
        start: r.start,
        end: r.end,
        text: r.text,
        confidence: r.confidence,
        ...(r.extra && { extra: r.extra }),
      });
    return {
      video_id: v.id,
      index_id: v.indexId,
      file_name: v.fileName,
      status: v.status,
      metadata: {
        duration: v.durationSec,
        fps: v.fps,
        width: v.width,
        height: v.height,
        video_codec: v.videoCodec,
        has_audio: v.hasAudio,
        file_size: v.sizeBytes,
        file_type: v.fileType,
        sha256: v.sha256,
        upload_time: v.uploadedAt.toISOString(),
      },
      engines: v.analysis ?? {},
      people: await this.peopleOf(v.id),
      segments: grouped,
    };
  }
}

/**
 * Why a video has no transcript, and what fills it in: a reanalysis of its speech stage, once a
 * transcriber is there (the video need not be added again).
 */
export function noTranscriptReason(video: Video): string {
  if (video.status !== 'ready')
    return `this video has no transcript yet (it is ${video.status}); try again when it is ready`;
  if (video.hasAudio === false) return 'this video has no transcript: it has no sound track';
  const reanalyze = `POST /videos/${video.id}/reanalyze with {"analyzers": ["speech"]} (or \`vidq reanalyze --index NAME --analyzers speech\`)`;
  if (!video.analysis)
    return 'this video has no transcript: it was stored without analysis (the server ran with --analysis-workers 0)';
  const speech = video.analysis.speech as Record<string, unknown> | undefined;
  if (!speech)
    return `this video has no transcript: its speech was not analysed (the speech analyzer was off); with it on, ${reanalyze} adds it`;
  if (typeof speech.transcripts_skipped === 'string')
    return `this video has no transcript: ${speech.transcripts_skipped}; once the transcriber answers, ${reanalyze} fills it in`;
  if (speech.stt === 'none' || speech.stt === undefined)
    return `this video has no transcript: no speech-to-text engine was configured when it was analysed; install a Whisper model (\`vidq models pull\`) or set --stt, restart, then ${reanalyze} fills it in`;
  return 'this video has no transcript: no speech was heard in it';
}
