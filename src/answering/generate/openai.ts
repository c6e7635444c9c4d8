/**
 * An OpenAI-compatible chat endpoint (POST <base>/v1/chat/completions): Ollama, llama.cpp server,
 * vLLM, LM Studio, or a hosted service. Plain JSON for `generate`, `stream: true` server-sent
 * events for `stream`; images go in the last user message as `image_url` data: URLs.
 *
 * Every reply is parsed at this boundary: a non-2xx status, a body that is not the documented
 * shape, or a stream that ends without `[DONE]` is a GeneratorError with a short, key-free reason.
 */
import type { GenerateRequest, Generator, GeneratorConfig, GeneratorInfo } from './types';
import { GeneratorError } from './errors';

type OpenAiConfig = Extract<GeneratorConfig, { type: 'openai' }>;

type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };
interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string | ContentPart[];
}

export class OpenAiGenerator implements Generator {
  readonly info: GeneratorInfo;
  readonly supports: { vision: boolean; streaming: boolean };
  private readonly endpoint: string;

  constructor(private readonly cfg: OpenAiConfig) {
    const base = new URL(cfg.url);
    const shown = `${base.origin}${base.pathname.replace(/\/+$/, '')}`;
    this.endpoint = `${shown}${/\/v1$/.test(shown) ? '' : '/v1'}/chat/completions`;
    this.info = { kind: 'generator', name: `openai:${cfg.model} via ${shown}` };
    this.supports = { vision: cfg.vision === true, streaming: true };
  }

  async generate(req: GenerateRequest, opts: { signal: AbortSignal }): Promise<{ text: string }> {
    const res = await this.post(req, false, opts.signal);
    const body = await readText(res, opts.signal);
    const json = parseJson(body, 'the reply');
    const text = (json as { choices?: { message?: { content?: unknown } }[] })?.choices?.[0]?.message?.content;
    if (typeof text !== 'string')
      throw new GeneratorError(`the reply has no choices[0].message.content (${this.snippet(body)})`);
    return { text };
  }

  async *stream(req: GenerateRequest, opts: { signal: AbortSignal }): AsyncIterable<string> {
    const res = await this.post(req, true, opts.signal);
    // A server that ignores `stream: true` answers one JSON object: take its content whole.
    if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
      const body = await readText(res, opts.signal);
      const text = (parseJson(body, 'the reply') as { choices?: { message?: { content?: unknown } }[] })?.choices?.[0]
        ?.message?.content;
      if (typeof text !== 'string')
        throw new GeneratorError(`the reply has no choices[0].message.content (${this.snippet(body)})`);
      yield text;
      return;
    }
    const reader = res.body!.getReader();
    const cancel = () => void reader.cancel().catch(() => {});
    opts.signal.addEventListener('abort', cancel, { once: true });
    const decoder = new TextDecoder();
    let buf = '';
    let done = false;
    try {
      while (!done) {
        const { value, done: ended } = await reader.read();
        opts.signal.throwIfAborted();
        if (ended) break;
        buf += decoder.decode(value, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).replace(/\r$/, '');
          buf = buf.slice(nl + 1);
          if (!line.startsWith('data:')) continue; // comments, event names, blank separators
          const data = line.slice(5).trim();
          if (data === '[DONE]') {
            done = true;
            break;
          }
          const chunk = parseJson(data, 'a stream event') as {
            error?: { message?: string } | string;
            choices?: { delta?: { content?: unknown }; finish_reason?: unknown }[];
          };
          if (chunk?.error)
            throw new GeneratorError(
              `the stream reported an error: ${this.snippet(typeof chunk.error === 'string' ? chunk.error : (chunk.error.message ?? JSON.stringify(chunk.error)))}`,
            );
          const piece = chunk?.choices?.[0]?.delta?.content;
          if (typeof piece === 'string' && piece.length) yield piece;
          else if (!Array.isArray(chunk?.choices))
            throw new GeneratorError(`a stream event has no choices (${this.snippet(data)})`);
        }
      }
      if (!done) throw new GeneratorError('the stream ended without [DONE]');
    } finally {
      opts.signal.removeEventListener('abort', cancel);
      if (!done) cancel();
    }
  }

  private async post(req: GenerateRequest, stream: boolean, signal: AbortSignal): Promise<Response> {
    const messages: ChatMessage[] = [
      { role: 'system', content: req.system },
      ...req.messages.map((m) => ({ role: m.role, content: m.content }) as ChatMessage),
    ];
    if (req.images?.length && this.supports.vision) {
      const last = messages.findLastIndex((m) => m.role === 'user');
      if (last >= 0) {
        const text = messages[last]!.content as string;
        messages[last] = {
          role: 'user',
          content: [
            { type: 'text', text },
            ...req.images.map((img) => ({ type: 'image_url' as const, image_url: { url: dataUrl(img) } })),
          ],
        };
      }
    }
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
    };
    if (this.cfg.apiKey) headers.authorization = `Bearer ${this.cfg.apiKey}`;
    let res: Response;
    try {
      res = await fetch(this.endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          model: this.cfg.model,
          messages,
          stream,
          temperature: this.cfg.temperature ?? 0.2,
          max_tokens: this.cfg.maxTokens ?? 512,
          ...(req.json ? { response_format: { type: 'json_object' } } : {}),
        }),
        signal,
        redirect: 'error',
      });
    } catch (e) {
      if (signal.aborted) throw signal.reason;
      throw new GeneratorError(`could not reach ${this.endpoint}: ${this.snippet((e as Error).message)}`);
    }
    if (!res.ok) {
      const body = await readText(res, signal).catch(() => '');
      throw new GeneratorError(`HTTP ${res.status} from ${this.endpoint}${body ? `: ${this.snippet(body)}` : ''}`);
    }
    return res;
  }

  /** A short, single-line excerpt of what the endpoint said, with the key blanked out. */
  private snippet(s: string): string {
    let t = s.replace(/\s+/g, ' ').trim();
    if (this.cfg.apiKey) t = t.split(this.cfg.apiKey).join('***');
    return t.length > 160 ? `${t.slice(0, 160)}…` : t;
  }
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const t = text.replace(/\s+/g, ' ').trim();
    throw new GeneratorError(`${what} is not JSON (${t.length > 80 ? `${t.slice(0, 80)}…` : t || 'empty'})`);
  }
}

async function readText(res: Response, signal: AbortSignal): Promise<string> {
  try {
    return await res.text();
  } catch (e) {
    if (signal.aborted) throw signal.reason;
    throw new GeneratorError(`the reply broke off: ${(e as Error).message}`);
  }
}

function dataUrl(img: Uint8Array): string {
  const mime =
    img[0] === 0x89 && img[1] === 0x50 ? 'image/png' : img[0] === 0x52 && img[1] === 0x49 ? 'image/webp' : 'image/jpeg';
  return `data:${mime};base64,${Buffer.from(img).toString('base64')}`;
}
