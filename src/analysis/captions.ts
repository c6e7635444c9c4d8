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
import type { Analyzer, EngineInfo, NewSegment, StageContext, StageResult } from './contracts';
import type { SampledFrame } from './frame-stream';
import { ModelServerError, type ModelServerClient } from './model-server/client';

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

export interface CaptionWindow {
  start: number;
  end: number;
  frames: SampledFrame[];
}

export class CaptionAnalyzer implements Analyzer {
  readonly stage = 'analyzing:captions';
  readonly kinds = ['caption'] as const;
  readonly info: EngineInfo;
  /** Mostly waiting on the server; against the visual stage's 1. */
  readonly weight = 0.5;

  constructor(private readonly opts: CaptionOptions) {
    this.info = { kind: 'captions', name: `openai:${opts.model} via ${opts.client.base}` };
  }

  async run(ctx: StageContext): Promise<StageResult> {
    const shots = ctx.segments(['shot']).map((s) => ({ start: s.start, end: s.end }));
    const windows = captionWindows(shots, ctx.frames(), this.opts.intervalSec ?? 10, ctx.video.durationSec);
    const base = { engine: 'openai', model: this.opts.model, server: this.opts.client.base };
    if (!windows.length) return { segments: [], summary: { ...base, captions: 0, note: 'no sampled frames' } };

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
    // Backpressure: only a few windows beyond the server's limit have their frames read and encoded
    // at a time (a long video has thousands of windows).
    const captions = await mapBounded(
      windows,
      this.opts.client.concurrency * 2,
      async (w): Promise<NewSegment | null> => {
        try {
          if (down) return null;
          const text = await this.caption(w, ctx.signal);
          if (!text) {
            problem(`an empty caption from ${this.opts.client.base}`);
            return null;
          }
          return { kind: 'caption', start: w.start, end: w.end, text, extra: { model: this.opts.model, engine: 'openai', frames: w.frames.map((f) => f.t) } };
        } catch (e) {
          if (!(e instanceof ModelServerError)) throw e;
          if (e.unreachable) down ??= e.message;
          problem(e.message);
          return null;
        } finally {
          ctx.progress(++done / windows.length);
        }
      },
    );
    const segments = captions.filter((c): c is NewSegment => c !== null);
    const summary: Record<string, unknown> = { ...base, captions: segments.length, windows: windows.length };
    if (!segments.length) summary.skipped = `captions: skipped — ${down ?? firstProblem}`;
    else if (failed) summary.incomplete = `captions: ${failed} of ${windows.length} skipped — ${down ?? firstProblem}`;
    return { segments, summary };
  }

  private async caption(w: CaptionWindow, signal: AbortSignal): Promise<string> {
    const images = await Promise.all(
      w.frames.map(async (f) => ({ type: 'image_url' as const, image_url: { url: `data:image/jpeg;base64,${(await readFile(f.path)).toString('base64')}` } })),
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

/**
 * The spans to caption: each shot, long shots cut into windows of about `intervalSec`, each with up
 * to FRAMES_PER_CAPTION of its sampled frames spread over it. A window with no sampled frame is
 * dropped (there is nothing to show the model). No shots (shot detection off): the whole video.
 */
export function captionWindows(shots: { start: number; end: number }[], frames: SampledFrame[], intervalSec: number, durationSec: number): CaptionWindow[] {
  const spans = shots.length ? shots : frames.length ? [{ start: 0, end: Math.max(durationSec, frames.at(-1)!.t) }] : [];
  const out: CaptionWindow[] = [];
  for (const shot of spans) {
    const len = shot.end - shot.start;
    const n = Math.max(1, Math.round(len / intervalSec));
    for (let k = 0; k < n; k++) {
      const start = round3(shot.start + (len * k) / n);
      const end = round3(shot.start + (len * (k + 1)) / n);
      const last = k === n - 1 && shot === spans.at(-1);
      const inside = frames.filter((f) => f.t >= start && (f.t < end || (last && f.t <= end)));
      if (!inside.length) continue;
      out.push({ start, end, frames: spread(inside, FRAMES_PER_CAPTION) });
    }
  }
  return out;
}

function spread<T>(items: T[], n: number): T[] {
  if (items.length <= n) return items;
  return Array.from({ length: n }, (_, k) => items[Math.round(((items.length - 1) * k) / (n - 1 || 1))]!);
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** `fn` over `items` with at most `lanes` calls at once; results in input order. */
async function mapBounded<T, R>(items: T[], lanes: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const k = next++;
      out[k] = await fn(items[k]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(lanes, items.length)) }, lane));
  return out;
}
