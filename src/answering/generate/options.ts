/**
 * The answer generator's options (`--generator TYPE` and the options of each type): declared here,
 * with the engine; config.ts composes them into the one typed configuration.
 */
import { apiKey, bool, engine, int, needs, serverUrl, strict, text } from '../../options';

const GENERATOR_TIMEOUT = int(
  'generator-timeout-ms',
  20_000,
  'longest a generated answer may take before the composed one is used (ms)',
  { min: 100 },
);
const GENERATOR_MODEL = text(
  'generator-model',
  '',
  'model name (openai) or model id in the models directory / absolute model folder (transformers)',
);

/** Who writes the answer of /inquire; the composed answer stays the fallback. */
export const GENERATOR_ENGINE = engine(
  'generator',
  'none',
  'who writes answers: none (composed from the evidence) | openai | transformers',
  {
    none: { timeoutMs: GENERATOR_TIMEOUT },
    /** An OpenAI-compatible /v1/chat/completions endpoint (Ollama, llama.cpp, vLLM, LM Studio, hosted). */
    openai: {
      url: needs(
        serverUrl(
          'generator-url',
          'OpenAI-compatible base URL, e.g. http://127.0.0.1:11434 (Ollama); "/v1" is added when missing',
          'VIDQ_GENERATOR_API_KEY (or --generator-api-key)',
        ),
        "the endpoint's base URL (e.g. http://127.0.0.1:11434)",
      ),
      model: needs(GENERATOR_MODEL, 'the model name the endpoint serves (e.g. llama3.1)'),
      apiKey: apiKey(
        'generator-api-key',
        'VIDQ_GENERATOR_API_KEY',
        'API key of the endpoint (prefer the environment variable: flags show in ps)',
      ),
      vision: strict(bool('generator-vision', false, 'the model reads images: send the cited frames (openai)')),
      timeoutMs: GENERATOR_TIMEOUT,
    },
    /** A local ONNX chat model through @huggingface/transformers. */
    transformers: {
      model: needs(GENERATOR_MODEL, 'a model id inside the models directory (or an absolute model folder)'),
      timeoutMs: GENERATOR_TIMEOUT,
    },
  },
);
