/**
 * A local ONNX chat model through @huggingface/transformers' `text-generation` pipeline, from a
 * model folder on disk only (env.allowRemoteModels = false: a missing file fails, it never turns
 * into a download). The folder has the transformers.js layout, e.g. onnx-community/Qwen2.5-0.5B-Instruct:
 * config.json, generation_config.json, tokenizer.json, tokenizer_config.json (with a chat
 * template) and onnx/model_quantized.onnx (or model.onnx, model_q4.onnx, model_fp16.onnx).
 *
 * Text only (no images). Calls run one at a time; an abort interrupts generation between tokens.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, isAbsolute, join } from 'node:path';
import type { GenerateRequest, Generator, GeneratorConfig, GeneratorInfo } from './types';
import { GeneratorError } from './errors';

type TransformersConfig = Extract<GeneratorConfig, { type: 'transformers' }>;

/** ONNX precisions tried in order, by the file name transformers.js loads for each. */
const DTYPES: { dtype: string; file: string }[] = [
  { dtype: 'q8', file: 'onnx/model_quantized.onnx' },
  { dtype: 'q4', file: 'onnx/model_q4.onnx' },
  { dtype: 'fp32', file: 'onnx/model.onnx' },
  { dtype: 'fp16', file: 'onnx/model_fp16.onnx' },
];
const REQUIRED = ['config.json', 'tokenizer.json', 'tokenizer_config.json'];

type ChatOutput = { generated_text: { role: string; content: string }[] | string }[];
type TextGenerationPipeline = ((
  messages: { role: string; content: string }[],
  opts: Record<string, unknown>,
) => Promise<ChatOutput>) & {
  tokenizer: unknown;
  dispose(): Promise<void>;
};

export class TransformersGenerator implements Generator {
  readonly info: GeneratorInfo;
  readonly supports = { vision: false, streaming: true };
  /** Folder that holds the model, and the id transformers.js resolves inside `root`. */
  private readonly root: string;
  private readonly id: string;
  private loading?: Promise<TextGenerationPipeline>;
  /** Calls run one after another: one ONNX session, one generation at a time. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly cfg: TransformersConfig) {
    if (isAbsolute(cfg.model)) {
      this.root = dirname(cfg.model);
      this.id = basename(cfg.model);
    } else {
      this.root = cfg.modelsDir;
      this.id = cfg.model;
    }
    this.info = { kind: 'generator', name: `transformers:${cfg.model}`, version: transformersVersion() };
  }

  get dir(): string {
    return join(this.root, this.id);
  }

  async generate(req: GenerateRequest, opts: { signal: AbortSignal }): Promise<{ text: string }> {
    return { text: await this.run(req, opts.signal, null) };
  }

  async *stream(req: GenerateRequest, opts: { signal: AbortSignal }): AsyncIterable<string> {
    const pending: string[] = [];
    let wake: (() => void) | null = null;
    let finished = false;
    let failure: unknown = null;
    const run = this.run(req, opts.signal, (piece) => {
      pending.push(piece);
      wake?.();
    }).then(
      () => (finished = true),
      (e) => {
        failure = e;
        finished = true;
      },
    );
    void run.finally(() => wake?.());
    while (true) {
      if (pending.length) {
        yield pending.shift()!;
        continue;
      }
      if (finished) break;
      await new Promise<void>((r) => (wake = r));
      wake = null;
    }
    if (failure) throw failure;
  }

  async close(): Promise<void> {
    const p = await this.loading?.catch(() => undefined);
    this.loading = undefined;
    await p?.dispose();
  }

  /** Files missing from the model folder for the first precision found (all of them when none is). */
  missingFiles(): string[] {
    const missing = REQUIRED.filter((f) => !existsSync(join(this.dir, f)));
    if (!DTYPES.some((d) => existsSync(join(this.dir, d.file))))
      missing.push(
        `onnx/model_quantized.onnx (or ${DTYPES.slice(1)
          .map((d) => d.file.slice(5))
          .join(', ')})`,
      );
    return missing;
  }

  private run(req: GenerateRequest, signal: AbortSignal, onText: ((s: string) => void) | null): Promise<string> {
    const next = this.queue.then(() => this.runNow(req, signal, onText));
    this.queue = next.catch(() => {});
    return next;
  }

  private async runNow(
    req: GenerateRequest,
    signal: AbortSignal,
    onText: ((s: string) => void) | null,
  ): Promise<string> {
    signal.throwIfAborted();
    const gen = await this.load();
    signal.throwIfAborted();
    const { InterruptableStoppingCriteria, TextStreamer } = await import('@huggingface/transformers');
    const stop = new InterruptableStoppingCriteria();
    const onAbort = () => stop.interrupt();
    signal.addEventListener('abort', onAbort, { once: true });
    const messages = [{ role: 'system', content: req.system }, ...req.messages];
    try {
      const out = await gen(messages, {
        max_new_tokens: this.cfg.maxNewTokens ?? 384,
        do_sample: false,
        stopping_criteria: stop,
        ...(onText
          ? {
              streamer: new TextStreamer(gen.tokenizer as never, {
                skip_prompt: true,
                skip_special_tokens: true,
                callback_function: onText,
              }),
            }
          : {}),
      });
      signal.throwIfAborted();
      const g = out[0]?.generated_text;
      const text = Array.isArray(g) ? g.at(-1)?.content : g;
      if (typeof text !== 'string') throw new GeneratorError('the text-generation pipeline returned no text');
      return text;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  private load(): Promise<TextGenerationPipeline> {
    this.loading ??= this.open().catch((e) => {
      // A later call retries (the model may have been put in place in the meantime).
      this.loading = undefined;
      throw e;
    });
    return this.loading;
  }

  private async open(): Promise<TextGenerationPipeline> {
    const missing = this.missingFiles();
    if (missing.length) {
      throw new GeneratorError(
        `the text-generation model "${this.cfg.model}" is not in ${this.root} (missing ${missing.join(', ')}); ` +
          'put a transformers.js ONNX chat model folder there (e.g. onnx-community/Qwen2.5-0.5B-Instruct) or set --generator none',
      );
    }
    const dtype = DTYPES.find((d) => existsSync(join(this.dir, d.file)))!.dtype;
    const { env, pipeline } = await import('@huggingface/transformers');
    // Local files only. The whisper engine sets the same global env; both point at local folders.
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = this.root.endsWith('/') ? this.root : `${this.root}/`;
    env.useFSCache = false;
    env.useBrowserCache = false;
    const threads = this.cfg.threads ?? 1;
    return (await pipeline('text-generation', this.id, {
      dtype: dtype as 'q8',
      device: 'cpu',
      session_options: { intraOpNumThreads: threads, interOpNumThreads: 1 },
    })) as unknown as TextGenerationPipeline;
  }
}

function transformersVersion(): string | undefined {
  try {
    return `transformers.js ${(createRequire(import.meta.url)('@huggingface/transformers/package.json') as { version: string }).version}`;
  } catch {
    return undefined;
  }
}
