/**
 * Content moderation of one video (flow core/content-moderation): sampled frames spread over the
 * video are judged by an NSFW image classifier that runs here (nsfwjs MobileNetV2, weights from
 * npm; nothing is downloaded) and, when a vision model server is configured, also by that model.
 * Each flag names the model that raised it.
 *
 * What the classifier can and cannot do is measured in bench/moderation.ts and said in docs/clients.md,
 * "Flows": it knows nudity and sexual content (classes Porn, Hentai, Sexy; Drawing and Neutral are
 * safe), not violence, weapons or drugs; only the vision model is asked about those.
 */
import { join } from 'node:path';
import type { Sharp } from '../analysis/assets/sharp';
import { chatContent } from '../analysis/stages/captions';
import type { ModelServerClient } from '../analysis/engines/model-server/client';
import { ModelWorker } from '../analysis/engines/model-worker';
import { MODERATION_WORKER } from '../analysis/workers/entries';
import { objectModelPaths } from '../analysis/stages/objects';
import type { Frame } from '../storage/rows';
import { clock } from './format';

export type ModerationRequest =
  | { type: 'init'; wasmDir: string }
  | { type: 'classify'; id: number; rgb: ArrayBuffer; width: number; height: number };
export type ModerationResponse =
  | { type: 'ready' }
  | { type: 'result'; id: number; classes: Record<string, number> }
  | { type: 'error'; id?: number; message: string };

export const NSFW_MODEL = 'nsfwjs-mobilenet_v2 (tfjs-wasm, npm nsfwjs 4.3.0)';
/**
 * Probability of Porn, Hentai or Sexy (each alone) that raises a flag. Safe frames of the shared
 * clips reach 0.70 (a dog on a skateboard, a woman in a kitchen: bench/moderation.ts); 0.8 keeps
 * a margin above them.
 */
export const FLAG_PROBABILITY = 0.8;
/** Most frames judged per video, spread evenly over it. */
export const MAX_FRAMES = 48;
const INPUT = 224;
const UNSAFE = ['Porn', 'Hentai', 'Sexy'] as const;

export const VISION_PROMPT =
  'You moderate video frames. Does this frame show nudity, sexual content, graphic violence, gore, weapons used against people, or drug use? ' +
  'Answer with JSON only: {"unsafe": true or false, "category": "nudity|sexual|violence|gore|weapons|drugs|none", "reason": "a few words"}';

export interface ModerationFlag {
  start_time: string;
  end_time: string;
  /** Seconds (additive beside the clock times). */
  start: number;
  end: number;
  category: string;
  score: number;
  /** The model that raised it. */
  model: string;
  reason?: string;
}

export interface ModerationOutput {
  flagged: boolean;
  flags: ModerationFlag[];
  frames_checked: number;
  models: string[];
  /** Models that could not judge, with why. */
  skipped: Record<string, string>;
}

class NsfwWorker extends ModelWorker<ModerationResponse, Record<string, number>> {
  constructor(wasmDir: string) {
    super(MODERATION_WORKER, {
      name: 'NSFW classifier',
      task: 'frame classification',
      init: { wasmDir },
      startTimeoutMs: 120_000,
      result: (m) => m.classes,
    });
  }

  classify(rgb: Uint8Array): Promise<Record<string, number>> {
    return this.request((id) => {
      const copy = rgb.slice().buffer as ArrayBuffer;
      return {
        message: { type: 'classify', id, rgb: copy, width: INPUT, height: INPUT } satisfies ModerationRequest,
        transfer: [copy],
      };
    });
  }
}

export class Moderator {
  private worker: NsfwWorker | null = null;

  constructor(
    private readonly d: {
      vision: { client: ModelServerClient; model: string } | null;
      /** The tfjs-backend-wasm binaries (the executable extracts them); undefined: the npm package's. */
      wasmDir?: () => Promise<string | undefined>;
      /** sharp, once its native library is loaded (see sharp.ts); default: imported as it is. */
      sharp?: () => Promise<Sharp>;
    },
  ) {}

  /** The frames' classes from the local model (nsfwjs), for bench/ and tests too. */
  async classify(path: string | Buffer): Promise<Record<string, number>> {
    const sharp = this.d.sharp ? await this.d.sharp() : ((await import('sharp')).default as unknown as Sharp);
    const rgb = await sharp(path).removeAlpha().resize(INPUT, INPUT, { fit: 'fill' }).raw().toBuffer();
    if (!this.worker?.alive) {
      const wasmDir = (await this.d.wasmDir?.()) ?? objectModelPaths().wasmDir;
      this.worker = new NsfwWorker(wasmDir);
      await this.worker.ready;
    }
    return this.worker.classify(new Uint8Array(rgb));
  }

  async moderate(frameDir: string, frames: Frame[], duration: number, signal: AbortSignal): Promise<ModerationOutput> {
    const picked = spread(frames, MAX_FRAMES);
    const flags: ModerationFlag[] = [];
    const skipped: Record<string, string> = {};
    const models = [NSFW_MODEL];
    const span = (k: number) => {
      const f = picked[k]!;
      const start = k > 0 ? (picked[k - 1]!.t + f.t) / 2 : 0;
      const end = k + 1 < picked.length ? (f.t + picked[k + 1]!.t) / 2 : Math.max(duration, f.t);
      return { start: Math.round(start * 1000) / 1000, end: Math.round(end * 1000) / 1000 };
    };
    for (let k = 0; k < picked.length; k++) {
      signal.throwIfAborted();
      const path = join(frameDir, picked[k]!.file);
      try {
        const classes = await this.classify(path);
        const worst = UNSAFE.map((c) => ({ c, p: classes[c] ?? 0 })).sort((a, b) => b.p - a.p)[0]!;
        if (worst.p >= FLAG_PROBABILITY) flags.push(flag(span(k), worst.c.toLowerCase(), worst.p, NSFW_MODEL));
      } catch (e) {
        skipped[NSFW_MODEL] = (e as Error).message;
        break;
      }
    }
    if (this.d.vision) {
      const name = `${this.d.vision.model} via ${this.d.vision.client.base}`;
      models.push(name);
      for (let k = 0; k < picked.length; k++) {
        signal.throwIfAborted();
        try {
          const verdict = await this.askVision(join(frameDir, picked[k]!.file), signal);
          if (verdict?.unsafe)
            flags.push({
              ...flag(span(k), verdict.category || 'unsafe', 1, name),
              reason: verdict.reason || undefined,
            });
        } catch (e) {
          skipped[name] = (e as Error).message;
          break;
        }
      }
    }
    flags.sort((a, b) => a.start - b.start || a.model.localeCompare(b.model));
    return { flagged: flags.length > 0, flags, frames_checked: picked.length, models, skipped };
  }

  close(): void {
    this.worker?.terminate(new Error('the moderator was closed'));
    this.worker = null;
  }

  private async askVision(
    path: string,
    signal: AbortSignal,
  ): Promise<{ unsafe: boolean; category: string; reason: string } | null> {
    const v = this.d.vision!;
    const b64 = Buffer.from(await Bun.file(path).arrayBuffer()).toString('base64');
    const reply = await v.client.postJson(
      '/chat/completions',
      {
        model: v.model,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: VISION_PROMPT },
              { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${b64}` } },
            ],
          },
        ],
        max_tokens: 80,
        temperature: 0,
        stream: false,
      },
      signal,
    );
    const text = chatContent(reply, v.client.base);
    const json = /\{[\s\S]*\}/.exec(text)?.[0];
    if (!json) return null;
    try {
      const o = JSON.parse(json) as { unsafe?: unknown; category?: unknown; reason?: unknown };
      return {
        unsafe: o.unsafe === true,
        category: typeof o.category === 'string' ? o.category.slice(0, 40) : '',
        reason: typeof o.reason === 'string' ? o.reason.slice(0, 200) : '',
      };
    } catch {
      return null;
    }
  }
}

function flag(s: { start: number; end: number }, category: string, score: number, model: string): ModerationFlag {
  return {
    start_time: clock(s.start, true),
    end_time: clock(s.end, true),
    start: s.start,
    end: s.end,
    category,
    score: Math.round(score * 1000) / 1000,
    model,
  };
}

/** At most `n` items, evenly spread (all of them when there are fewer). */
export function spread<T>(items: T[], n: number): T[] {
  if (items.length <= n) return items;
  return Array.from({ length: n }, (_, k) => items[Math.floor(((k + 0.5) * items.length) / n)]!);
}
