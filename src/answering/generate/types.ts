/** What a generator is and how it is configured: the engines (openai.ts, transformers.ts) implement these, contracts.ts builds them. */
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
