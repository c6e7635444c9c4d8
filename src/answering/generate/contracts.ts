/**
 * Answer-writing backends behind one interface ("one interface, many engines"): the answering
 * service retrieves and composes the evidence itself, then — when a generator is configured — asks
 * it to write the answer from that evidence, and falls back to the composed answer on any failure.
 *
 *   none          no generative model; the composed (extractive) answer is the answer
 *   openai        an OpenAI-compatible /v1/chat/completions endpoint (Ollama, llama.cpp server,
 *                 vLLM, LM Studio, or a hosted one), streaming over SSE, images as data: URLs
 *   transformers  a local ONNX chat model through @huggingface/transformers (offline only)
 */
import type { Config } from '../../config';
import { OpenAiGenerator } from './openai';
export { GeneratorError } from './errors';
import { TransformersGenerator } from './transformers';

export interface GeneratorInfo {
  kind: 'generator';
  /** Shown as the response's `model`, e.g. "openai:llama3.1 via http://127.0.0.1:11434". */
  name: string;
  version?: string;
}

export interface Message {
  role: 'user' | 'assistant';
  content: string;
}

export interface GenerateRequest {
  system: string;
  messages: Message[];
  /** Encoded images (JPEG or PNG) attached to the last user message; only for `supports.vision`. */
  images?: Uint8Array[];
  /** Ask for one JSON object as the reply (the model's JSON mode), for structured output. */
  json?: boolean;
}

export interface Generator {
  readonly info: GeneratorInfo;
  readonly supports: { vision: boolean; streaming: boolean };
  /** The whole answer. Rejects on any failure (HTTP error, bad reply, abort); the caller falls back. */
  generate(req: GenerateRequest, opts: { signal: AbortSignal }): Promise<{ text: string }>;
  /** The answer in chunks as they are produced (present when `supports.streaming`). */
  stream?(req: GenerateRequest, opts: { signal: AbortSignal }): AsyncIterable<string>;
  close?(): Promise<void>;
}

export type GeneratorConfig =
  | { type: 'none' }
  | {
      type: 'openai';
      /** Base URL; "/v1/chat/completions" (or "/chat/completions" after a "/v1") is appended. */
      url: string;
      model: string;
      apiKey?: string;
      /** Send the cited frames as images. @default false */
      vision?: boolean;
      /** Sampling temperature. @default 0.2 */
      temperature?: number;
      /** Longest answer, in tokens. @default 512 */
      maxTokens?: number;
    }
  | {
      type: 'transformers';
      /** Model id inside `modelsDir` (Hugging Face layout), or an absolute model folder. */
      model: string;
      modelsDir: string;
      /** Longest answer, in new tokens. @default 384 */
      maxNewTokens?: number;
      /** Inference threads. @default 1 */
      threads?: number;
    };

/** The generator part of the service config. */
export function generatorConfigOf(c: Config): GeneratorConfig {
  const g = c.generator;
  switch (g.type) {
    case 'openai':
      return { type: 'openai', url: g.url, model: g.model, apiKey: g.apiKey || undefined, vision: g.vision };
    case 'transformers':
      return { type: 'transformers', model: g.model, modelsDir: c.modelsDir };
    case 'none':
      return { type: 'none' };
  }
}

/** Null for "none": the composed answer is used as it is. */
export function createGenerator(cfg: GeneratorConfig): Generator | null {
  switch (cfg.type) {
    case 'none':
      return null;
    case 'openai':
      return new OpenAiGenerator(cfg);
    case 'transformers':
      return new TransformersGenerator(cfg);
    default:
      throw new Error(`unknown generator "${String((cfg as { type: unknown }).type)}" (none, openai or transformers)`);
  }
}
