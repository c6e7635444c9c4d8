/**
 * POST /inquire and /inquire-stream. Validates the question's scope (index, target_video, target),
 * charges credits (check and debit in one statement; refunded when answering fails) and composes the
 * answer from the indexed evidence (see compose.ts); it never invents.
 *
 * With a generator configured (see generate/contracts.ts) the composed answer's evidence, the
 * question and the guidance go to the model, which writes the answer instead; the composed answer
 * stays the fallback on any failure (error, timeout, bad reply, a time that is not in the evidence:
 * see generate/times.ts). Nothing is sent to the model when the composed answer found nothing.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AccountService } from '../accounts/service';
import type { Config } from '../config';
import { ApiError, badRequest, notFound } from '../errors';
import { createLogger, type Logger } from '../log';
import type { DataDir } from '../storage/files';
import type { IndexService } from '../indexes/service';
import type { Catalog } from '../storage/catalog';
import { videoInIndex } from '../storage/repositories/finder';
import type { MediaIndex, User, Video } from '../storage/rows';
import type { Embedder } from '../analysis/embedder';
import type { MomentReader } from '../analysis/moment';
import type { MediaLinks } from '../media/links';
import { composeAnswer } from './answer';
import { relativeScope, type StreamClock } from './relative-time';
import { checkModelJson, fillFields, jsonModeRequest, parseJsonFields, type JsonFields } from './json-output';
import type { Composed, ComposeInput } from './compose';
import type { RetrievalCore } from '../search/retrieval';
import { type EvidenceFinder, windowOf, type Evidence } from './evidence';
import { createGenerator, generatorConfigOf, type GenerateRequest, type Generator } from './generate/contracts';
import { buildRequest, MAX_IMAGES } from './generate/prompt';
import { TimeGuard, ungroundedTimes, visibleText } from './generate/times';
import { formatTime, parseTarget, type TimeTarget } from './target';

export interface InquireRequest {
  index: string;
  prompt: string;
  guidance?: string;
  target?: string;
  target_video?: string;
  /** file_ids of the index's videos to consider (the hosted API's `subindex`); unset: all of them. */
  subindex?: string[];
  /** Structured output asked for: field name → description, as an object or JSON-encoded (built by the answering issue). */
  json?: string | Record<string, unknown>;
}

export interface InquireResponse {
  status: 'complete';
  output: string;
  /** Additive: what the answer is based on, best first; every time in `output` is one of these. */
  evidence: Evidence[];
  /** Additive: which backend wrote the answer. */
  model: string;
  /** Additive: credits this question cost. */
  credits_used: number;
}

export interface Scope {
  index: MediaIndex;
  videos: Video[];
  target: TimeTarget | null;
}

/** A question that passed validation, was charged, and has its evidence and composed answer. */
export interface PreparedQuestion {
  user: User;
  req: InquireRequest;
  scope: Scope;
  composed: Composed;
  cost: number;
  /** The fields of a JSON output (`json`: "structured output"), or null. */
  fields: JsonFields | null;
}

/** The answer text and who wrote it. */
export interface Written {
  output: string;
  model: string;
}

/** What /inquire-stream passes on while the answer is written. */
export type AnswerEvent =
  | { type: 'token'; text: string }
  /** The tokens so far are void (the model failed or cited a time not in the evidence); the composed answer follows. */
  | { type: 'reset'; reason: string };

export class AnsweringService {
  private readonly finder: EvidenceFinder;
  /** Null: the composed answer is the answer. */
  readonly generator: Generator | null;
  private readonly files: DataDir;
  private readonly log: Logger;

  constructor(
    private readonly d: {
      catalog: Catalog;
      config: Config;
      accounts: AccountService;
      indexes: IndexService;
      links: MediaLinks;
      files: DataDir;
      embedder: Embedder | null;
      /** The retrieval core shared with search. */
      retrieval: RetrievalCore;
      /** Default: the one the config names (--generator). */
      generator?: Generator | null;
      /** Reads the text on screen at one moment (questions with a point target); null: sampled frames only. */
      moments?: MomentReader | null;
      /** Live streams' clocks, for "in the last 10 minutes" and "now" (none: every video is a finished file). */
      streamClock?: StreamClock;
      log?: Logger;
    },
  ) {
    this.finder = d.retrieval.finder;
    this.generator = d.generator !== undefined ? d.generator : createGenerator(generatorConfigOf(d.config));
    this.files = d.files;
    this.log = d.log ?? createLogger(d.config.logLevel, { part: 'answering' });
  }

  /** Resolves and checks everything the question names; throws 400/404 before any charge. */
  async scope(user: User, req: InquireRequest): Promise<Scope> {
    // By index_id or by name, as /remote-upload takes it.
    const index = await this.d.indexes.resolve(user, req.index, { byName: true });
    const target = req.target !== undefined && req.target !== '' ? parseTarget(req.target) : null;
    let vids: Video[];
    if (req.target_video !== undefined && req.target_video !== '') {
      const v = await videoInIndex(this.d.catalog, req.target_video, index.id);
      if (!v) throw notFound(`target_video ${JSON.stringify(req.target_video.slice(0, 80))} is not in this index`);
      if (target && v.durationSec !== null && target.start > v.durationSec + 0.5) {
        throw badRequest(
          `target ${formatTime(target.start)} is past the end of the video (${formatTime(v.durationSec)})`,
        );
      }
      vids = [v];
    } else if (req.subindex !== undefined) {
      const wanted = new Set(req.subindex);
      vids = (await this.d.indexes.resources(user.id, index.id)).filter((v) => wanted.has(v.id));
      // Every id must be a video of this index: another user's or index's id is as unknown as a made-up one.
      if (vids.length < wanted.size) {
        const missing = [...wanted].find((id) => !vids.some((v) => v.id === id)) ?? '';
        throw notFound(`subindex: file ${JSON.stringify(missing.slice(0, 80))} is not in this index`);
      }
    } else {
      // The index's listing, cached until one of its videos changes (a question no longer reads
      // every video row of the index).
      vids = [...(await this.d.indexes.resources(user.id, index.id))];
    }
    // "In the last 10 minutes", "is anyone there now": a window or moment of the live streams (or
    // of a finished file's end), when no target is given.
    if (!target) {
      const rel = await relativeScope(req.prompt, vids, this.d.streamClock ?? (async () => null));
      if (rel) return { index, videos: rel.videos, target: rel.target };
    }
    return { index, videos: vids, target };
  }

  async inquire(user: User, req: InquireRequest, signal?: AbortSignal): Promise<InquireResponse> {
    const p = await this.prepare(user, req);
    const written = await this.write(p, signal);
    return {
      status: 'complete',
      output: written.output,
      evidence: p.composed.evidence,
      model: written.model,
      credits_used: p.cost,
    };
  }

  /**
   * Validates (400/404 before any charge), charges the question once, and retrieves the evidence
   * with the composed answer. Throws the HTTP error to answer; a failure after the charge refunds it.
   */
  async prepare(user: User, req: InquireRequest): Promise<PreparedQuestion> {
    const scope = await this.scope(user, req);
    const fields = parseJsonFields(req.json);
    const cost = this.d.config.inquireCost;
    if (!(await this.d.accounts.charge(user.id, cost, 'inquire'))) {
      const balance = (await this.d.accounts.getUser(user.id))?.credits ?? 0;
      throw badRequest(`insufficient credits: the balance is ${balance} and a question costs ${cost}`);
    }
    try {
      let composed = await this.compose(req, scope);
      this.log.debug('question read', { reading: composed.reading, found: composed.found });
      if (fields) {
        // Each field is a question of its own, in the scope of the request, narrowed like
        // `target_video` to the videos the prompt names ("tell me about the bottles video"): the
        // fields' own words name none. The main answer's evidence comes first.
        const named = composed.slots?.files ?? [];
        const fieldScope = named.length && scope.videos.length > 1 ? { ...scope, videos: named } : scope;
        const filled = await fillFields(fields, (q) => this.compose({ ...req, prompt: q }, fieldScope));
        const evidence = [...composed.evidence, ...filled.evidence.filter((e) => !composed.evidence.includes(e))];
        composed = { ...composed, output: filled.output, evidence, found: composed.found || filled.found };
      }
      return { user, req, scope, composed, cost, fields };
    } catch (e) {
      await this.refund(user, cost);
      throw e instanceof ApiError ? e : new ApiError(500, `answering failed: ${(e as Error).message}`);
    }
  }

  /** Gives a charged question's credits back (it could not be answered). */
  async refund(user: User, cost: number): Promise<void> {
    await this.d.accounts.refund(user.id, cost, 'inquire failed');
  }

  /** The answer: the generator's when one is configured and it succeeds, else the composed one. Never throws. */
  async write(p: PreparedQuestion, outer?: AbortSignal): Promise<Written> {
    const gen = this.generator;
    if (!gen || !this.worthAsking(p)) return { output: p.composed.output, model: COMPOSER_NAME };
    const run = this.signals(outer);
    try {
      if (p.fields) {
        const res = await gen.generate(jsonModeRequest(await this.request(p, gen), p.fields), { signal: run.signal });
        const json = checkModelJson(visibleText(res.text)?.trim() ?? '', p.fields, p.composed.evidence);
        if (!json)
          return this.fallback(
            p,
            gen,
            'the reply was not a JSON object of the fields asked, with times from the evidence',
          );
        return { output: json, model: gen.info.name };
      }
      const res = await gen.generate(await this.request(p, gen), { signal: run.signal });
      const text = visibleText(res.text)?.trim() ?? '';
      if (!text) return this.fallback(p, gen, 'the answer was empty');
      const bad = ungroundedTimes(text, p.composed.evidence);
      if (bad.length) return this.fallback(p, gen, `it cited a time that is not in the evidence ("${bad[0]}")`);
      return { output: text, model: gen.info.name };
    } catch (e) {
      return this.fallback(p, gen, run.reason(e));
    } finally {
      run.dispose();
    }
  }

  /**
   * The answer as it is written, through `emit`: the generator's stream (checked as it goes, see
   * TimeGuard) or the composed answer word by word. When the model fails after tokens were sent, a
   * `reset` event voids them and the composed answer follows. Never throws (unless `emit` does).
   */
  async writeStreaming(
    p: PreparedQuestion,
    outer: AbortSignal | undefined,
    emit: (e: AnswerEvent) => void,
  ): Promise<Written> {
    const words = (text: string) => {
      for (const w of text.match(/\S+\s*/g) ?? []) emit({ type: 'token', text: w });
    };
    const gen = this.generator;
    if (p.fields) {
      // A JSON object is only an answer whole: it is checked first, then sent as one token.
      const w = await this.write(p, outer);
      emit({ type: 'token', text: w.output });
      return w;
    }
    if (!gen || !this.worthAsking(p)) {
      words(p.composed.output);
      return { output: p.composed.output, model: COMPOSER_NAME };
    }
    const run = this.signals(outer);
    const guard = new TimeGuard(p.composed.evidence);
    const fallback = (reason: string) => {
      run.stop();
      if (guard.released > 0) emit({ type: 'reset', reason });
      const w = this.fallback(p, gen, reason);
      words(w.output);
      return w;
    };
    try {
      const req = await this.request(p, gen);
      const source: AsyncIterable<string> =
        gen.supports.streaming && gen.stream
          ? gen.stream(req, { signal: run.signal })
          : once(gen.generate(req, { signal: run.signal }));
      for await (const piece of source) {
        const r = guard.push(piece);
        if (!r.ok) return fallback(`it cited a time that is not in the evidence ("${r.bad}")`);
        if (r.text) emit({ type: 'token', text: r.text });
      }
      const r = guard.end();
      if (!r.ok) return fallback(`it cited a time that is not in the evidence ("${r.bad}")`);
      if (!r.output) return fallback('the answer was empty');
      if (r.text) emit({ type: 'token', text: r.text });
      return { output: r.output, model: gen.info.name };
    } catch (e) {
      return fallback(run.reason(e));
    } finally {
      run.dispose();
    }
  }

  /** A model is asked only when there is evidence to write from. */
  private worthAsking(p: PreparedQuestion): boolean {
    return p.composed.found && p.composed.evidence.length > 0;
  }

  private fallback(p: PreparedQuestion, gen: Generator, reason: string): Written {
    this.log.warn('the generator failed; answered with the composed answer', { generator: gen.info.name, reason });
    return { output: p.composed.output, model: `${COMPOSER_NAME} (fallback: ${gen.info.name}: ${reason})` };
  }

  /** The client's signal, the configured timeout, and our own stop, as one signal. */
  private signals(outer?: AbortSignal) {
    const ms = this.d.config.generator.timeoutMs;
    const timeout = AbortSignal.timeout(ms);
    const own = new AbortController();
    const signal = AbortSignal.any([timeout, own.signal, ...(outer ? [outer] : [])]);
    return {
      signal,
      stop: () => own.abort(new Error('stopped')),
      dispose: () => own.abort(new Error('done')),
      reason: (e: unknown): string => {
        if (timeout.aborted) return `timed out after ${ms} ms`;
        if (outer?.aborted) return 'the request was cancelled';
        const msg = e instanceof Error ? e.message : String(e);
        return msg.length > 300 ? `${msg.slice(0, 300)}…` : msg;
      },
    };
  }

  private async request(p: PreparedQuestion, gen: Generator): Promise<GenerateRequest> {
    return buildRequest({
      prompt: p.req.prompt,
      guidance: p.req.guidance ?? '',
      evidence: p.composed.evidence,
      draft: p.composed.output,
      window: windowOf(p.scope.target),
      images: gen.supports.vision ? await this.frames(p.composed.evidence) : undefined,
    });
  }

  /** The sampled frames of the best evidence items (distinct, at most MAX_IMAGES), as JPEG bytes. */
  private async frames(evidence: Evidence[]): Promise<{ item: number; bytes: Uint8Array }[]> {
    const out: { item: number; bytes: Uint8Array }[] = [];
    const seen = new Set<string>();
    // Every item's frame in one read (most of them are used).
    const files = await this.finder.framesNear(evidence.map((e) => [e.video_id, (e.start + e.end) / 2]));
    for (const [i, e] of evidence.entries()) {
      if (out.length >= MAX_IMAGES) break;
      if (!e.frame_url) continue;
      const file = files[i];
      if (!file || seen.has(`${e.video_id}/${file}`)) continue;
      seen.add(`${e.video_id}/${file}`);
      const path = join(this.files.videoDir(e.video_id), 'frames', file);
      if (!existsSync(path)) continue;
      out.push({ item: i + 1, bytes: new Uint8Array(readFileSync(path)) });
    }
    return out;
  }

  compose(req: InquireRequest, scope: Scope): Promise<Composed> {
    return composeAnswer({
      catalog: this.d.catalog,
      retrieval: this.d.retrieval,
      embedder: this.d.embedder,
      indexId: scope.index.id,
      prompt: req.prompt,
      guidance: req.guidance ?? '',
      videos: scope.videos,
      window: windowOf(scope.target),
      point: scope.target?.point ? scope.target.start : null,
      frameUrl: (videoId, file) => this.d.links.sign(`/media/${videoId}/frames/${file}`),
      moment: this.momentOf(scope),
      textAt: (video, t) => this.textAt(video, t),
    });
  }

  /** Reads the text on screen at one moment of a stored video; null without a reader or a stored file. */
  private textAt(video: Video, t: number): (() => Promise<{ text: string; confidence: number }[]>) | null {
    const reader = this.d.moments;
    if (!reader || !video.storagePath) return null;
    if (video.durationSec !== null && t > video.durationSec) return null;
    const path = this.files.abs(video.storagePath);
    return () => reader.read(video.id, path, t);
  }

  /** The one moment a question is about, when it names a point of one stored video. */
  private momentOf(scope: Scope): ComposeInput['moment'] {
    const video = scope.videos.length === 1 ? scope.videos[0]! : null;
    if (!video || !scope.target?.point) return null;
    const t = scope.target.start;
    const readText = this.textAt(video, t);
    return readText ? { video, t, readText } : null;
  }
}

async function* once(p: Promise<{ text: string }>): AsyncIterable<string> {
  yield (await p).text;
}

/** Reported as `model` when no generative model wrote the answer. */
export const COMPOSER_NAME = 'vidq-composer (extractive, no generative model)';
