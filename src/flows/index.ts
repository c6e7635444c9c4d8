/**
 * The hosted API's flows (`POST /core/<name>`), built on the retrieval core and the stored
 * analysis: search, clipping (best moments cut at shot boundaries), scene detection (shots grouped
 * into scenes, described from what was seen, read and said) and content moderation.
 */
import { join } from 'node:path';
import { analysisAssets } from '../analysis/assets/extract';
import { type Limiter, ModelServerClient } from '../analysis/engines/model-server/client';
import { readIntent } from '../answering/intent';
import { noisyText, sureSpeech } from '../answering/noise';
import { countsOf } from '../answering/series';
import { POSSIBLY_BELOW } from '../answering/wording';
import type { Config } from '../config';
import { badRequest, notFound } from '../errors';
import type { IndexService } from '../indexes/service';
import type { Logger } from '../log';
import type { RetrievalCore } from '../search/retrieval';
import type { Catalog } from '../storage/catalog';
import type { DataDir } from '../storage/files';
import { videoInIndex } from '../storage/repositories/finder';
import { peopleOfSegments, videoFrames } from '../storage/repositories/flows';
import type { MediaIndex, Segment, User, Video } from '../storage/rows';
import { clock } from './format';
import { ImageQueries } from './image-query';
import { Moderator, type ModerationOutput } from './moderation';
import { hamming } from './phash';
import { loadSharp } from '../analysis/assets/sharp';
import { SdkSearchService, type SdkSearchOutput } from './sdk-search';

export const FLOW_NAMES = ['search', 'clipping', 'scene-detection', 'content-moderation'] as const;
export type FlowName = (typeof FLOW_NAMES)[number];

export interface FlowAnswer {
  status: 'complete';
  video_id: string | null;
  output: unknown;
}

export interface Clip {
  video_id: string;
  start_time: string;
  end_time: string;
  overview: string;
  /** Additive: the same times in seconds, and how well the clip matched (0–1). */
  start: number;
  end: number;
  score: number;
  /** Additive: true when the clip is not cut at shot boundaries: one shot was longer than max_length and the clip was cut inside it, or the shots around the match could not give min_length and it was cut across them. */
  cut_within_shot: boolean;
}

export interface Scene {
  scene_id: number;
  start_time: string;
  end_time: string;
  description: string;
  type: string;
  cues: string[];
  characters_or_subjects: string[];
  /** Additive: seconds, and the shots (by start time) the scene is made of. */
  start: number;
  end: number;
  shots: number;
}

/** Shots whose middle frames differ in at most this many hash bits (of 64) look like one place. */
const SAME_PLACE_BITS = 20;
/** Or: they show the same kinds of thing (Jaccard of object labels). */
const SAME_THINGS = 0.6;
const MAX_CLIPS = 10;

interface Span {
  start: number;
  end: number;
}

export class FlowService {
  readonly images: ImageQueries;
  readonly search: SdkSearchService;
  readonly moderator: Moderator;

  constructor(
    private readonly d: {
      catalog: Catalog;
      config: Config;
      files: DataDir;
      indexes: IndexService;
      retrieval: RetrievalCore;
      ffmpeg: () => Promise<string>;
      log: Logger;
      /** The process's one limit on model-server requests. */
      modelLimiter: Limiter;
    },
  ) {
    this.images = new ImageQueries({ ...d, log: d.log.child({ part: 'image-search' }) });
    this.search = new SdkSearchService({ ...d, images: this.images });
    const c = d.config;
    this.moderator = new Moderator({
      vision:
        c.captioner.type === 'openai'
          ? {
              client: new ModelServerClient({
                url: c.captioner.url,
                apiKey: c.captioner.apiKey,
                timeoutMs: c.modelTimeoutMs,
                retries: c.modelRetries,
                limiter: d.modelLimiter,
              }),
              model: c.captioner.model,
            }
          : null,
      wasmDir: async () => (await analysisAssets(d.files.assetsDir, ['objects'])).objects?.wasmDir,
      sharp: () => loadSharp(d.files.assetsDir),
    });
  }

  /** 404 for a name that is not a flow (before authentication: the list is public). */
  checkName(name: string): asserts name is FlowName {
    if (!(FLOW_NAMES as readonly string[]).includes(name))
      throw notFound(`no flow named ${JSON.stringify(name.slice(0, 60))}; the flows are ${FLOW_NAMES.join(', ')}`);
  }

  async run(user: User, name: string, body: Record<string, unknown>, signal: AbortSignal): Promise<FlowAnswer> {
    this.checkName(name);
    const index = await this.d.indexes.resolve(user, str(body, 'index', true)!, { byName: true });
    switch (name as FlowName) {
      case 'search': {
        const answer = await this.search.search(
          user,
          {
            index: index.id,
            query: str(body, 'query'),
            image: str(body, 'image'),
            numargs: num(body, 'num_args') ?? num(body, 'numargs'),
            threshold: num(body, 'threshold'),
            subindex: list(body, 'subindex'),
          },
          signal,
        );
        return { status: 'complete', video_id: null, output: answer.output satisfies SdkSearchOutput };
      }
      case 'clipping': {
        const v = await this.videoOf(index, body);
        const output = await this.clipping(v, body);
        const note = this.fewerClips(v, body, Object.keys(output).length);
        return { status: 'complete', video_id: v.id, output, ...(note && { note }) };
      }
      case 'scene-detection': {
        const v = await this.videoOf(index, body);
        return { status: 'complete', video_id: v.id, output: { scenes: await this.scenes(v) } };
      }
      case 'content-moderation': {
        const v = await this.videoOf(index, body);
        return { status: 'complete', video_id: v.id, output: await this.moderate(v, signal) };
      }
    }
  }

  async close(): Promise<void> {
    this.moderator.close();
    await this.images.close();
  }

  /** The best moments of one video for a prompt, each cut at shot boundaries within the lengths asked. */
  async clipping(v: Video, body: Record<string, unknown>): Promise<Record<string, Clip>> {
    const prompt = str(body, 'prompt', true)!.trim();
    if (!prompt) throw badRequest('field "prompt" must not be empty');
    if (prompt.length > 1000) throw badRequest('field "prompt" must be at most 1000 characters');
    const numClips = num(body, 'num_clips') ?? 3;
    if (!Number.isInteger(numClips) || numClips < 1 || numClips > MAX_CLIPS)
      throw badRequest(`field "num_clips" must be a whole number from 1 to ${MAX_CLIPS}`);
    const duration = v.durationSec ?? 0;
    const minLen = num(body, 'min_length') ?? 0;
    const maxLen = num(body, 'max_length') ?? Math.max(60, minLen);
    if (!(minLen >= 0) || !(maxLen > 0) || minLen > maxLen)
      throw badRequest('fields "min_length" and "max_length" must be seconds with 0 ≤ min_length ≤ max_length');
    const target = Math.min(Math.max(num(body, 'length') ?? Math.min(15, maxLen), minLen), maxLen);
    const scope = { videos: [v], window: null };
    const shots = await this.shotsOf(v);
    const ranked = (await this.d.retrieval.retrieve(scope, prompt, readIntent(prompt), 100)).filter(
      (r) => r.segment.kind !== 'shot' || r.keyword || (r.cosine ?? 0) > 0.3,
    );
    const top = ranked[0]?.score || 1;
    /** How much of the ranking falls in a shot: used to choose which neighbour a clip grows into. */
    const weight = shots.map((s) => ranked.reduce((w, r) => w + (overlaps(r.segment, s) ? r.score / top : 0), 0));
    const used = new Set<number>();
    const clips: Clip[] = [];
    for (const r of ranked) {
      if (clips.length >= numClips) break;
      const mid = (r.segment.start + r.segment.end) / 2;
      if (clips.some((c) => mid >= c.start && mid <= c.end)) continue;
      let a = shotAt(shots, r.segment.start);
      let b = Math.max(a, shotAt(shots, Math.max(r.segment.start, r.segment.end - 0.001)));
      if ([...range(a, b)].some((k) => used.has(k))) {
        // Another match in a shot a clip already took: where the shot is long, a clip of the
        // length wanted is cut around this match, outside the clips there are (issue 34, class 9).
        const want = Math.min(maxLen, Math.max(target, minLen));
        const from = Math.max(0, Math.min(mid - want / 2, duration > 0 ? duration - want : mid));
        const inner = { start: from, end: from + want };
        if (want <= 0 || clips.some((c) => inner.start < c.end && inner.end > c.start)) continue;
        clips.push({
          video_id: v.id,
          start_time: clock(inner.start),
          end_time: clock(inner.end),
          overview: await this.overview(v, inner, r.segment),
          start: round3(inner.start),
          end: round3(inner.end),
          score: round3(r.score / top),
          cut_within_shot: true,
        });
        continue;
      }
      const len = () => shots[b]!.end - shots[a]!.start;
      // Longer than allowed: drop the end shot that matched less while more than one is left.
      while (len() > maxLen && b > a) {
        if (weight[a]! < weight[b]!) a++;
        else b--;
      }
      // Shorter than wanted: grow into the neighbour that matched more, if it still fits.
      while (len() < target) {
        const prev = a > 0 && !used.has(a - 1) ? shots[b]!.end - shots[a - 1]!.start : Infinity;
        const next = b + 1 < shots.length && !used.has(b + 1) ? shots[b + 1]!.end - shots[a]!.start : Infinity;
        const takePrev = prev <= maxLen && (next > maxLen || weight[a - 1]! >= weight[b + 1]!);
        const takeNext = !takePrev && next <= maxLen;
        if (takePrev) a--;
        else if (takeNext) b++;
        else break;
      }
      let start = shots[a]!.start;
      let end = shots[b]!.end;
      let within = false;
      if (end - start > maxLen) {
        // One shot longer than max_length: no boundary to cut at, so cut inside it around the match.
        within = true;
        const want = Math.min(maxLen, Math.max(target, minLen));
        start = Math.min(Math.max(start, mid - want / 2), end - want);
        end = start + want;
      }
      if (end - start < minLen - 1e-6) {
        // The shots around the match cannot give min_length within max_length (a short last
        // shot between long ones): a clip of the length wanted is cut around the match across the
        // boundaries, unless the video is shorter or it would overlap a clip there is (class 9).
        const want = Math.min(maxLen, Math.max(target, minLen));
        if (!(duration >= want)) continue;
        start = Math.min(Math.max(0, mid - want / 2), duration - want);
        end = start + want;
        if (clips.some((c) => start < c.end && end > c.start)) continue;
        within = true;
      }
      for (const k of range(a, b)) used.add(k);
      clips.push({
        video_id: v.id,
        start_time: clock(start),
        end_time: clock(end),
        overview: await this.overview(v, { start, end }, r.segment),
        start: round3(start),
        end: round3(end),
        score: round3(r.score / top),
        cut_within_shot: within,
      });
    }
    if (duration > 0 && clips.length === 0 && minLen > duration)
      throw badRequest(`min_length (${minLen} s) is longer than the video (${round3(duration)} s)`);
    return Object.fromEntries(clips.map((c, k) => [`clip_${k + 1}`, c]));
  }

  /** Why a clipping returned fewer clips than asked, or null when it returned them all. */
  fewerClips(v: Video, body: Record<string, unknown>, got: number): string | null {
    const asked = num(body, 'num_clips') ?? 3;
    if (got >= asked) return null;
    const prompt = String(body.prompt ?? '').trim();
    return got === 0
      ? `no moment of ${v.fileName} matches "${prompt.slice(0, 80)}" within min_length/max_length`
      : `${asked} clips were asked for; only ${got} moment${got === 1 ? '' : 's'} of ${v.fileName} match "${prompt.slice(0, 80)}" without overlapping (${got === 1 ? 'it does' : 'they do'} not fill ${asked} clips of the length asked)`;
  }

  /** Consecutive shots that look like one place (or show the same things) grouped into scenes. */
  async scenes(v: Video): Promise<Scene[]> {
    const shots = await this.shotsOf(v);
    const scope = { videos: [v], window: null };
    const objects = await this.d.retrieval.byKind(scope, ['object']);
    const hashes = await this.images.frameHashesOf(v.id);
    const middleHash = (s: Span) => {
      const mid = (s.start + s.end) / 2;
      let best: { t: number; hash: bigint } | null = null;
      for (const f of hashes)
        if (f.t >= s.start && f.t <= s.end && (!best || Math.abs(f.t - mid) < Math.abs(best.t - mid))) best = f;
      return best?.hash ?? null;
    };
    const labelsOf = (s: Span) => new Set(objects.filter((o) => overlaps(o, s)).map((o) => o.text));
    const groups: Span[][] = [];
    let prev: { hash: bigint | null; labels: Set<string> } | null = null;
    for (const s of shots) {
      const cur = { hash: middleHash(s), labels: labelsOf(s) };
      const same =
        prev !== null &&
        ((prev.hash !== null && cur.hash !== null && hamming(prev.hash, cur.hash) <= SAME_PLACE_BITS) ||
          (cur.labels.size > 0 && jaccard(prev.labels, cur.labels) >= SAME_THINGS));
      if (same) groups[groups.length - 1]!.push(s);
      else groups.push([s]);
      prev = cur;
    }
    return Promise.all(groups.map((g, k) => this.describeScene(v, k + 1, g)));
  }

  async moderate(v: Video, signal: AbortSignal): Promise<ModerationOutput> {
    const rows = await videoFrames(this.d.catalog, v.id);
    if (!rows.length)
      throw badRequest('this video has no sampled frames yet (its analysis is not done, or ran without "visual")');
    return this.moderator.moderate(join(this.d.files.videoDir(v.id), 'frames'), rows, v.durationSec ?? 0, signal);
  }

  private async videoOf(index: MediaIndex, body: Record<string, unknown>): Promise<Video> {
    const id = str(body, 'video_id', true)!.split('.')[0]!;
    const v = await videoInIndex(this.d.catalog, id, index.id);
    if (!v) throw notFound(`video ${JSON.stringify(id.slice(0, 80))} is not in this index`);
    if (v.storagePath === null || v.status !== 'ready')
      throw badRequest(`video ${v.id} is not analysed yet (status ${v.status}); try again when it is ready`);
    return v;
  }

  /** The video's shots in time order; a video analysed without shots is one shot. */
  private async shotsOf(v: Video): Promise<Span[]> {
    const shots = (await this.d.retrieval.byKind({ videos: [v], window: null }, ['shot']))
      .map((s) => ({ start: s.start, end: s.end }))
      .sort((a, b) => a.start - b.start);
    return shots.length ? shots : [{ start: 0, end: v.durationSec ?? 0 }];
  }

  /** A clip's overview: the matched moment, then what is seen, written and said in the clip. */
  private async overview(v: Video, span: Span, matched: Segment): Promise<string> {
    const inSpan = await this.d.retrieval.byKind({ videos: [v], window: span }, [
      'caption',
      'object',
      'ocr',
      'speech',
      'transcript',
    ]);
    const parts = [`Best match (${matched.kind}): ${quote(matched.text)}.`];
    parts.push(...evidenceSentences(await this.clean(v, inSpan), await this.speechSure(v)));
    return parts.join(' ');
  }

  private async describeScene(v: Video, id: number, shots: Span[]): Promise<Scene> {
    const span = { start: shots[0]!.start, end: shots[shots.length - 1]!.end };
    const seg = await this.d.retrieval.byKind({ videos: [v], window: span }, [
      'caption',
      'object',
      'ocr',
      'speech',
      'transcript',
      'face',
    ]);
    const clean = await this.clean(v, seg);
    const by = (k: string) => clean.filter((s) => s.kind === k);
    // Speech the voice detector was unsure of may be music: no "dialogue" (issue 34, class 8).
    const sure = await this.speechSure(v);
    const speech = [...(sure ? by('speech') : []), ...by('transcript')];
    const text = by('ocr');
    const labels = countLabels(by('object'));
    const names = await this.peopleIn(by('face'));
    const description =
      evidenceSentences(clean, sure).join(' ') ||
      'Nothing was recognised in this part (no objects, text, speech or captions).';
    const type = speech.length
      ? 'dialogue'
      : text.length
        ? 'text on screen'
        : labels.has('person') || names.length
          ? 'people'
          : labels.size
            ? 'objects'
            : 'scenery';
    const cues: string[] = [];
    if (shots.length > 1)
      cues.push(
        `${shots.length} shots: cuts at ${shots
          .slice(1)
          .map((s) => clock(s.start, true))
          .join(', ')}`,
      );
    if (speech.length) cues.push('speech');
    else if (by('speech').length) cues.push('possible speech or music');
    if (text.length) cues.push('on-screen text');
    if (by('caption').length) cues.push('caption');
    const colours = [...new Set(by('object').flatMap((o) => (o.extra?.colours as string[] | undefined) ?? []))];
    if (colours.length) cues.push(`colours: ${colours.slice(0, 4).join(', ')}`);
    return {
      scene_id: id,
      start_time: clock(span.start, true),
      end_time: clock(span.end, true),
      description,
      type,
      cues,
      characters_or_subjects: [...names, ...[...labels.keys()].filter((l) => !(names.length && l === 'person'))],
      start: round3(span.start),
      end: round3(span.end),
      shots: shots.length,
    };
  }

  /** The segments less what is no fact to state (noise.ts): on-screen fragments and watermarks. */
  private async clean(v: Video, seg: Segment[]): Promise<Segment[]> {
    const noisy = await noisyText(this.d.retrieval, { videos: [v], window: null }, seg);
    return noisy.size ? seg.filter((s) => !noisy.has(s.id)) : seg;
  }

  /** Whether the voice detection of a video is sure (noise.ts): else its speech may be music. */
  private async speechSure(v: Video): Promise<boolean> {
    return !sureSpeech(await this.d.retrieval.byKind({ videos: [v], window: null }, ['speech', 'transcript'])).hedged;
  }

  /** Names of the people whose appearances these face segments are (their id when unnamed). */
  private async peopleIn(faces: Segment[]): Promise<string[]> {
    if (!faces.length) return [];
    const rows = await peopleOfSegments(
      this.d.catalog,
      faces.map((f) => f.id),
    );
    return [...new Set(rows.map((r) => r.name ?? `person ${r.id}`))];
  }
}

/** Sentences from the evidence of a span: captions first, then things seen, text read, words said. */
function evidenceSentences(seg: Segment[], speechSure: boolean): string[] {
  const out: string[] = [];
  const captions = [...new Set(seg.filter((s) => s.kind === 'caption').map((s) => s.text))];
  if (captions.length) out.push(captions.slice(0, 2).join(' '));
  const objects = seg.filter((s) => s.kind === 'object');
  const labels = countLabels(objects);
  // A label the detector was never sure of is said as possible (issue 34, class 8).
  const sure = (l: string) => objects.some((o) => o.text === l && (o.confidence ?? 1) >= POSSIBLY_BELOW);
  if (labels.size)
    out.push(
      `Seen: ${[...labels.entries()]
        .slice(0, 6)
        .map(([l, n]) => `${sure(l) ? '' : 'possibly '}${n > 1 ? `${l} (up to ${n})` : l}`)
        .join(', ')}.`,
    );
  const text = [...new Set(seg.filter((s) => s.kind === 'ocr').map((s) => s.text))];
  if (text.length) out.push(`On screen: ${text.slice(0, 3).map(quote).join(', ')}.`);
  const said = seg.filter((s) => s.kind === 'transcript').map((s) => s.text);
  const speech = seg.filter((s) => s.kind === 'speech');
  if (said.length) out.push(`Said: ${quote(said.join(' ').slice(0, 300))}.`);
  else if (speech.length && speechSure) out.push('Someone speaks (not transcribed).');
  else if (speech.length) out.push('Something that may be speech, or music, is heard.');
  return out;
}

/** Object labels with the most of each seen at once, most frequent label first. */
function countLabels(objects: Segment[]): Map<string, number> {
  const m = new Map<string, number>();
  // Weak and duplicate boxes are not counted as more at once (issue 34, class 8).
  for (const o of objects) m.set(o.text, Math.max(m.get(o.text) ?? 0, countsOf(o).most));
  return new Map([...m.entries()].sort((a, b) => b[1] - a[1]));
}

function quote(s: string): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return `“${t.length > 160 ? `${t.slice(0, 157)}…` : t}”`;
}

function overlaps(a: Span, b: Span): boolean {
  return a.start < b.end && b.start < a.end;
}

function shotAt(shots: Span[], t: number): number {
  const k = shots.findIndex((s) => t >= s.start && t < s.end);
  if (k >= 0) return k;
  return t < shots[0]!.start ? 0 : shots.length - 1;
}

function* range(a: number, b: number): Generator<number> {
  for (let k = a; k <= b; k++) yield k;
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (!a.size && !b.size) return 0;
  let both = 0;
  for (const x of a) if (b.has(x)) both++;
  return both / (a.size + b.size - both);
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** A body field as a string (400 when it has another type; `required`: 400 when absent). */
function str(body: Record<string, unknown>, key: string, required = false): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) {
    if (required) throw badRequest(`field "${key}" is required`);
    return undefined;
  }
  if (typeof v !== 'string') throw badRequest(`field "${key}" must be a string`);
  if (v.length > 100_000 && key !== 'image') throw badRequest(`field "${key}" is too long`);
  return v;
}

function num(body: Record<string, unknown>, key: string): number | undefined {
  const v = body[key];
  if (v === undefined || v === null || v === '') return undefined;
  const n = typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw badRequest(`field "${key}" must be a number`);
  return n;
}

function list(body: Record<string, unknown>, key: string): string[] | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
    throw badRequest(`field "${key}" must be a list of file ids`);
  return v as string[];
}
