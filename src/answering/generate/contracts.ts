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
import type { Generator, GeneratorConfig } from './types';

export type { GenerateRequest, Generator, GeneratorConfig, GeneratorInfo, Message } from './types';

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
