/**
 * A STAND-IN for an OpenAI-compatible model server (Ollama, vLLM, llama.cpp, speaches, a hosted
 * API), which cannot run here. It speaks the published request and response shapes and checks the
 * requests it gets against them:
 *   POST /v1/chat/completions      content parts with `image_url` base64 JPEG data: URLs
 *   POST /v1/audio/transcriptions  multipart file/model/response_format/timestamp_granularities[]
 *   POST /v1/embeddings            {model, input: string[]} → {data: [{embedding, index}]}
 *   GET  /api/tags, POST /api/show Ollama's model list and capabilities
 * It sees nothing: its captions and transcripts are whatever the test tells it to say. It also
 * measures how many requests were in flight at once, and can misbehave on demand.
 */

export type Misbehaviour = 'none' | '500' | 'garbage' | 'empty' | 'wrong-shape' | 'slow' | 'json';

export interface StandInOptions {
  /** Reply to a caption request (k = 0, 1, … in arrival order). */
  caption?: (k: number, images: number) => string;
  /** Segments of a transcription reply, in seconds of the chunk (durationSec is the chunk's length). */
  transcript?: (k: number, durationSec: number) => { start: number; end: number; text: string }[];
  /** Delay before each reply, per endpoint, in ms. */
  delayMs?: { chat?: number; transcription?: number; embeddings?: number };
  /** Embedding vector of a text. @default a 16-dim bag of character trigrams */
  embed?: (text: string) => number[];
  /** Ollama's installed models for /api/tags and /api/show. */
  ollamaModels?: { name: string; capabilities: string[] }[];
}

export interface ModelRequest {
  path: string;
  authorization: string | null;
  body: unknown;
  /** For transcriptions: the multipart fields (file as its byte length). */
  form?: Record<string, string | number>;
  /** Problems with the request's shape, as the real server would refuse it. */
  problems: string[];
}

export class ModelStandIn {
  readonly requests: ModelRequest[] = [];
  misbehave: Misbehaviour = 'none';
  /** Most requests in flight at once. */
  peak = 0;
  private active = 0;
  private captions = 0;
  private transcriptions = 0;
  private readonly server: ReturnType<typeof Bun.serve>;

  constructor(private readonly opts: StandInOptions = {}) {
    this.server = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 60, fetch: (req) => this.handle(req) });
  }

  get url(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }

  resetCounts(): void {
    this.requests.length = 0;
    this.peak = 0;
  }

  stop(): void {
    this.server.stop(true);
  }

  private async handle(req: Request): Promise<Response> {
    const path = new URL(req.url).pathname;
    this.active++;
    this.peak = Math.max(this.peak, this.active);
    try {
      if (req.method === 'GET' && path === '/api/tags')
        return Response.json({
          models: (this.opts.ollamaModels ?? []).map((m) => ({
            name: m.name,
            model: m.name,
            size: 1,
            details: { family: 'x' },
          })),
        });
      if (req.method === 'POST' && path === '/api/show') {
        const body = (await req.json()) as { model?: string; name?: string };
        const m = (this.opts.ollamaModels ?? []).find((x) => x.name === (body.model ?? body.name));
        return m
          ? Response.json({ details: { family: 'x' }, capabilities: m.capabilities })
          : Response.json({ error: 'model not found' }, { status: 404 });
      }
      const rec: ModelRequest = { path, authorization: req.headers.get('authorization'), body: null, problems: [] };
      this.requests.push(rec);
      if (req.method === 'POST' && path === '/v1/chat/completions') return await this.chat(req, rec);
      if (req.method === 'POST' && path === '/v1/audio/transcriptions') return await this.transcribe(req, rec);
      if (req.method === 'POST' && path === '/v1/embeddings') return await this.embeddings(req, rec);
      return Response.json({ error: { message: 'not found' } }, { status: 404 });
    } finally {
      this.active--;
    }
  }

  private async failure(kind: 'chat' | 'transcription' | 'embeddings'): Promise<Response | null> {
    await Bun.sleep(this.misbehave === 'slow' ? 5_000 : (this.opts.delayMs?.[kind] ?? 0));
    if (this.misbehave === '500') return Response.json({ error: { message: 'model crashed' } }, { status: 500 });
    if (this.misbehave === 'garbage')
      return new Response('<html>502 bad gateway</html>', { headers: { 'content-type': 'text/html' } });
    if (this.misbehave === 'wrong-shape') return Response.json({ result: 'ok' });
    return null;
  }

  private async chat(req: Request, rec: ModelRequest): Promise<Response> {
    const body = (await req.json()) as { model?: unknown; messages?: { role?: string; content?: unknown }[] };
    rec.body = body;
    if (typeof body.model !== 'string' || !body.model) rec.problems.push('model missing');
    const parts = Array.isArray(body.messages?.[0]?.content)
      ? (body.messages![0]!.content as { type?: string; text?: string; image_url?: { url?: string } }[])
      : [];
    const images = parts.filter((p) => p.type === 'image_url');
    if (!parts.some((p) => p.type === 'text' && typeof p.text === 'string')) rec.problems.push('no text part');
    if (!images.length) rec.problems.push('no image_url part');
    for (const p of images) {
      const m = /^data:image\/jpeg;base64,(.+)$/.exec(p.image_url?.url ?? '');
      const bytes = m ? Buffer.from(m[1]!, 'base64') : null;
      if (bytes?.[0] !== 0xff || bytes[1] !== 0xd8)
        rec.problems.push('an image_url that is not a base64 JPEG data: URL');
    }
    const failed = await this.failure('chat');
    if (failed) return failed;
    const text =
      this.misbehave === 'empty'
        ? ''
        : (this.opts.caption ?? ((k) => `stand-in caption number ${k}.`))(this.captions++, images.length);
    return Response.json({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    });
  }

  private async transcribe(req: Request, rec: ModelRequest): Promise<Response> {
    const form = await req.formData();
    const file = form.get('file');
    const fields: Record<string, string | number> = {};
    for (const [k, v] of form.entries()) fields[k] = typeof v === 'string' ? v : v.size;
    rec.form = fields;
    if (!(file instanceof Blob)) {
      rec.problems.push('no file part');
      return Response.json({ error: { message: 'file missing' } }, { status: 400 });
    }
    const wav = new Uint8Array(await file.arrayBuffer());
    const head = new TextDecoder().decode(wav.subarray(0, 12));
    if (!head.startsWith('RIFF') || !head.endsWith('WAVE')) rec.problems.push('file is not a WAV');
    const view = new DataView(wav.buffer, wav.byteOffset);
    const rate = view.getUint32(24, true);
    const durationSec = (wav.length - 44) / 2 / rate;
    if (!fields.model) rec.problems.push('model missing');
    const failed = await this.failure('transcription');
    if (failed) return failed;
    const k = this.transcriptions++;
    const segs =
      this.misbehave === 'empty'
        ? []
        : (this.opts.transcript ?? ((_, d) => [{ start: 0, end: d, text: 'stand-in words' }]))(k, durationSec);
    const text = segs.map((s) => s.text).join(' ');
    if (this.misbehave === 'json' || fields.response_format === 'json') return Response.json({ text });
    return Response.json({
      task: 'transcribe',
      language: 'english',
      duration: durationSec,
      text,
      segments: segs.map((s, id) => ({
        id,
        seek: 0,
        start: s.start,
        end: s.end,
        text: ` ${s.text}`,
        avg_logprob: -0.2,
        no_speech_prob: 0.01,
      })),
    });
  }

  private async embeddings(req: Request, rec: ModelRequest): Promise<Response> {
    const body = (await req.json()) as { model?: unknown; input?: unknown };
    rec.body = body;
    const inputs =
      typeof body.input === 'string' ? [body.input] : Array.isArray(body.input) ? (body.input as unknown[]) : null;
    if (!inputs?.every((x) => typeof x === 'string')) rec.problems.push('input is not a string or a list of strings');
    const failed = await this.failure('embeddings');
    if (failed) return failed;
    const embed = this.opts.embed ?? trigramVector;
    return Response.json({
      object: 'list',
      model: body.model,
      data: (inputs ?? []).map((t, index) => ({ object: 'embedding', index, embedding: embed(String(t)) })),
      usage: { prompt_tokens: 1, total_tokens: 1 },
    });
  }
}

/** A deterministic stand-in embedding: character trigrams hashed into 16 buckets, normalised. */
export function trigramVector(text: string): number[] {
  const v = new Array(16).fill(0);
  const s = ` ${text.toLowerCase()} `;
  for (let k = 0; k + 3 <= s.length; k++) {
    let h = 0;
    for (const c of s.slice(k, k + 3)) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    v[h % 16] += 1;
  }
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}
