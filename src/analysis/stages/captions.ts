/**
 * Captions: an open-vocabulary description of every shot (long shots: one per --caption-interval-sec)
 * from a vision model behind an OpenAI-compatible chat endpoint (Ollama, vLLM, llama.cpp, a hosted
 * API). The shot's sampled frames go as base64 `image_url` data: parts, which all of those accept.
 *
 * A model server that is down, slow or answers nonsense never fails the video: a window whose
 * request fails is left without a caption (logged once); when the server cannot be reached at all
 * the kind is skipped and the metadata says why, so `reanalyze` can fill it in later.
 */
import { readFile } from 'node:fs/promises';
import {
  framesOf,
  type Analyzer,
  type EngineInfo,
  type NewSegment,
  type StageContext,
  type StageResult,
} from '../contracts';
import { apiKey, engine, int, needs, serverUrl, text } from '../../options';
import { defineAnalyzer } from '../descriptor';
import type { SampledFrame } from '../frame-stream';
import { Limiter, ModelServerError, type ModelServerClient } from '../engines/model-server/client';

export const CAPTION_PROMPT =
  'Describe what is visible in these frames from one shot of a video: the people, their actions, the objects, the setting, and any text shown. ' +
  'Answer in one or two plain sentences. Describe only what is visible; do not speculate.';

/** Frames sent per caption: enough to see an action, few enough to keep requests small. */
const FRAMES_PER_CAPTION = 2;
/** Longest caption kept (a model that rambles is cut at a sentence end before this). */
const MAX_CAPTION_CHARS = 400;

export interface CaptionOptions {
  client: ModelServerClient;
  model: string;
  /** One caption per this many seconds of a long shot. @default 10 */
  intervalSec?: number;
  /** Most tokens the model may write. @default 120 */
  maxTokens?: number;
}

export class CaptionAnalyzer implements Analyzer {
  readonly stage = 'analyzing:captions';
  readonly kinds = ['caption'] as const;
  readonly info: EngineInfo;
  /** Mostly waiting on the server; against the visual stage's 1. */
  readonly weight = 0.5;
  /** Runs beside the visual stage: a window's request goes out as soon as its frames are final. */
  readonly concurrent = true;
  readonly readsFrames = true;

  constructor(private readonly opts: CaptionOptions) {
    this.info = { kind: 'captions', name: `openai:${opts.model} via ${opts.client.base}` };
  }

  async run(ctx: StageContext): Promise<StageResult> {
    const interval = this.opts.intervalSec ?? 10;
    const base = { engine: 'openai', model: this.opts.model, server: this.opts.client.base };
    // Backpressure: only a few windows beyond the server's limit have their frames read and encoded
    // at a time (a long video has thousands of windows).
    const lanes = new Limiter(this.opts.client.concurrency * 2);
    const groups: { group: FrameGroup; reply: Promise<string | null> }[] = [];
    let done = 0;
    let failed = 0;
    let firstProblem: string | null = null;
    /** Set once the server is known to be unreachable: the remaining windows are not sent. */
    let down: string | null = null;
    const problem = (why: string) => {
      failed++;
      if (firstProblem === null) {
        firstProblem = why;
        ctx.log.warn('caption skipped', { reason: why, more: 'further problems are counted, not logged' });
      }
    };
    const send = (group: FrameGroup) => {
      const reply = lanes.run(async () => {
        try {
          if (down) {
            failed++;
            return null;
          }
          const text = await this.caption(group.frames, ctx.signal);
          if (!text) problem(`an empty caption from ${this.opts.client.base}`);
          return text || null;
        } catch (e) {
          if (!(e instanceof ModelServerError)) throw e;
          if (e.unreachable) down ??= e.message;
          problem(e.message);
          return null;
        } finally {
          ctx.progress(++done / Math.max(groups.length, 1));
        }
      }, ctx.signal);
      // Awaited below; a rejection before then (the analysis stopped) must not count as unhandled.
      reply.catch(() => {});
      groups.push({ group, reply });
    };
    // A window is complete once a frame of a later window (or the end of the stream) arrives.
    let open: FrameGroup | null = null;
    for await (const f of framesOf(ctx)) {
      const next = extendGroups(open, f, interval);
      if (next) {
        if (open) send(open);
        open = next;
      }
    }
    if (open) send(open);
    const replies = await Promise.all(groups.map((g) => g.reply));
    // The shots are known now (the frame stream ends after the visual stage has stored them).
    const shots = ctx.segments(['shot']).map((s) => ({ start: s.start, end: s.end }));
    const spans = groupSpans(
      groups.map((g) => g.group),
      shots,
      ctx.video.durationSec,
    );
    const segments: NewSegment[] = [];
    groups.forEach((g, k) => {
      const text = replies[k];
      if (text)
        segments.push({
          kind: 'caption',
          start: spans[k]!.start,
          end: spans[k]!.end,
          text,
          extra: { model: this.opts.model, engine: 'openai', frames: spreadFrames(g.group.frames).map((f) => f.t) },
        });
    });
    if (!groups.length) return { segments: [], summary: { ...base, captions: 0, note: 'no sampled frames' } };
    const summary: Record<string, unknown> = { ...base, captions: segments.length, windows: groups.length };
    if (!segments.length) summary.skipped = `captions: skipped — ${down ?? firstProblem}`;
    else if (failed) summary.incomplete = `captions: ${failed} of ${groups.length} skipped — ${down ?? firstProblem}`;
    return { segments, summary };
  }

  private async caption(frames: SampledFrame[], signal: AbortSignal): Promise<string> {
    const images = await Promise.all(
      spreadFrames(frames).map(async (f) => ({
        type: 'image_url' as const,
        image_url: { url: `data:image/jpeg;base64,${(await readFile(f.path)).toString('base64')}` },
      })),
    );
    const reply = await this.opts.client.postJson(
      '/chat/completions',
      {
        model: this.opts.model,
        messages: [{ role: 'user', content: [{ type: 'text', text: CAPTION_PROMPT }, ...images] }],
        max_tokens: this.opts.maxTokens ?? 120,
        temperature: 0,
        stream: false,
      },
      signal,
    );
    return cleanCaption(chatContent(reply, this.opts.client.base));
  }
}

/** choices[0].message.content of a chat completion (a string, or text parts); a wrong shape is a ModelServerError. */
export function chatContent(reply: unknown, from: string): string {
  const content = (reply as { choices?: { message?: { content?: unknown } }[] } | null)?.choices?.[0]?.message?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p?.text === 'string' ? p.text : '')).join(' ');
  throw new ModelServerError(`a reply without choices[0].message.content from ${from}`);
}

/** One line, no markdown emphasis or quotes around it, at most MAX_CAPTION_CHARS (cut at a sentence end). */
export function cleanCaption(text: string): string {
  let s = text
    .replace(/<think>[\s\S]*?<\/think>/g, '')
    .replace(/[*_#`]+/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^["“']+|["”']+$/g, '')
    .trim();
  if (s.length > MAX_CAPTION_CHARS) {
    const cut = s.slice(0, MAX_CAPTION_CHARS);
    const stop = cut.lastIndexOf('. ');
    s = stop > 40 ? cut.slice(0, stop + 1) : cut.trimEnd() + '…';
  }
  return s;
}

/** Sampled frames of one caption window: a shot, or about `intervalSec` of a long one. */
export interface FrameGroup {
  shot: number;
  /** Time of the shot's first sampled frame (windows are counted from it while the shot streams in). */
  startT: number;
  /** Window number within the shot. */
  bucket: number;
  frames: SampledFrame[];
}

const bucketOf = (g: FrameGroup, f: SampledFrame, intervalSec: number) =>
  Math.floor((f.t - (g.startT - g.bucket * intervalSec)) / intervalSec);
const sameWindow = (g: FrameGroup, f: SampledFrame, intervalSec: number) =>
  g.shot === f.shot && bucketOf(g, f, intervalSec) === g.bucket;

/** Adds `f` to the open window, or returns the window it opens (counted from the shot's first frame). */
function extendGroups(open: FrameGroup | null, f: SampledFrame, intervalSec: number): FrameGroup | null {
  if (open && sameWindow(open, f, intervalSec)) {
    open.frames.push(f);
    return null;
  }
  if (open && open.shot === f.shot) {
    const bucket = bucketOf(open, f, intervalSec);
    return { shot: f.shot, startT: open.startT + (bucket - open.bucket) * intervalSec, bucket, frames: [f] };
  }
  return { shot: f.shot, startT: f.t, bucket: 0, frames: [f] };
}

/** The windows of a list of frames, as the caption stage forms them while they stream in. */
export function frameGroups(frames: SampledFrame[], intervalSec: number): FrameGroup[] {
  const out: FrameGroup[] = [];
  for (const f of frames) {
    const next = extendGroups(out.at(-1) ?? null, f, intervalSec);
    if (next) out.push(next);
  }
  return out;
}

/**
 * The time span each window's caption covers: the windows of a shot split it without gaps (the
 * first from the shot's start, each next from its first frame, the last to the shot's end). Without
 * shots (shot detection off) the windows split the video the same way.
 */
export function groupSpans(
  groups: FrameGroup[],
  shots: { start: number; end: number }[],
  durationSec: number,
): { start: number; end: number }[] {
  return groups.map((g, k) => {
    const shot = shots[g.shot] ?? { start: 0, end: Math.max(durationSec, g.frames.at(-1)!.t) };
    const prev = groups[k - 1];
    const next = groups[k + 1];
    const start = prev && prev.shot === g.shot ? g.frames[0]!.t : shot.start;
    const end = next && next.shot === g.shot ? next.frames[0]!.t : shot.end;
    return {
      start: round3(Math.max(shot.start, Math.min(start, shot.end))),
      end: round3(Math.max(start, Math.min(end, shot.end))),
    };
  });
}

/** Up to FRAMES_PER_CAPTION of a window's frames, spread over it. */
function spreadFrames(items: SampledFrame[]): SampledFrame[] {
  const n = FRAMES_PER_CAPTION;
  if (items.length <= n) return items;
  return Array.from({ length: n }, (_, k) => items[Math.round(((items.length - 1) * k) / (n - 1 || 1))]!);
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** Who writes shot captions at index time. */
export const CAPTIONER_ENGINE = engine(
  'captioner',
  'none',
  'shot captions at index time: none | openai (key: VIDQ_CAPTIONER_API_KEY)',
  {
    none: {},
    /** An OpenAI-compatible /v1/chat/completions vision model. */
    openai: {
      url: needs(
        serverUrl(
          'captioner-url',
          'OpenAI-compatible base URL of the vision model, e.g. http://127.0.0.1:11434',
          'VIDQ_CAPTIONER_API_KEY',
        ),
        "the server's base URL (e.g. http://127.0.0.1:11434)",
      ),
      model: needs(
        text('captioner-model', '', 'vision model name, e.g. qwen2.5vl'),
        'a vision model the server serves (e.g. qwen2.5vl)',
      ),
      apiKey: apiKey(null, 'VIDQ_CAPTIONER_API_KEY', 'bearer key of the captioning server'),
      intervalSec: int('caption-interval-sec', 10, 'one caption per N seconds of a long shot', { min: 1 }),
    },
  },
);

/**
 * Shot captions: on when a captioner is configured (not named in --analyzers), read beside the
 * visual stage and placed before the embeddings, which embed them like any segment.
 */
export const captionsDescriptor = defineAnalyzer({
  name: 'captions',
  options: {},
  engines: { captioner: CAPTIONER_ENGINE },
  listed: false,
  live: true,
  reanalyzable: true,
  create: ({ captioner }, setup) =>
    captioner.type === 'openai'
      ? new CaptionAnalyzer({
          client: setup.modelServer(captioner.url, captioner.apiKey),
          model: captioner.model,
          intervalSec: captioner.intervalSec,
        })
      : null,
});
