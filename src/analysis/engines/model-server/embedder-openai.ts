/**
 * Sentence vectors from an OpenAI-compatible embeddings endpoint (POST {base}/embeddings: Ollama's
 * nomic-embed-text, vLLM, LocalAI, a hosted API). Vectors are L2-normalised here, as the built-in
 * encoder's are, so a dot product stays a cosine. `info.name` names the model and the server: the
 * pipeline records it per video, and questions compare only vectors of the same name.
 */
import type { EngineInfo } from '../../contracts';
import type { Embedder } from '../embedder';
import { ModelServerError, type ModelServerClient } from './client';

/** Texts per request: small enough for every server's batch limit, large enough to keep requests few. */
const BATCH = 64;
/** Longer texts are cut (embedding models have short context windows; meaning saturates). */
const MAX_TEXT_CHARS = 2000;

export class OpenAiEmbedder implements Embedder {
  readonly info: EngineInfo;
  /** Known after the first reply (0 until then). */
  dims = 0;

  constructor(
    private readonly client: ModelServerClient,
    private readonly model: string,
    private readonly signal: AbortSignal = new AbortController().signal,
  ) {
    this.info = { kind: 'embeddings', name: `openai:${model} via ${client.base}` };
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = new Array(texts.length);
    const batches: Promise<void>[] = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      const slice = texts.slice(i, i + BATCH);
      batches.push(this.batch(slice).then((vs) => vs.forEach((v, k) => (out[i + k] = v))));
    }
    await Promise.all(batches);
    return out;
  }

  private async batch(texts: string[]): Promise<Float32Array[]> {
    // An empty text gets the zero vector (as with the built-in encoder); servers refuse empty inputs.
    const asked = texts.map((t, k) => [t.slice(0, MAX_TEXT_CHARS), k] as const).filter(([t]) => t.trim() !== '');
    const result: (Float32Array | null)[] = texts.map(() => null);
    if (asked.length) {
      const reply = (await this.client.postJson(
        '/embeddings',
        { model: this.model, input: asked.map(([t]) => t) },
        this.signal,
      )) as { data?: { embedding?: unknown; index?: unknown }[] } | null;
      const data = reply?.data;
      if (!Array.isArray(data) || data.length !== asked.length)
        throw new ModelServerError(`an embeddings reply without one data[] item per input from ${this.client.base}`);
      data.forEach((d, j) => {
        const at = typeof d?.index === 'number' ? d.index : j;
        const e = d?.embedding;
        if (
          !Array.isArray(e) ||
          !e.length ||
          !e.every((x) => typeof x === 'number' && Number.isFinite(x)) ||
          at < 0 ||
          at >= asked.length
        ) {
          throw new ModelServerError(`an embeddings reply with a malformed data[${j}] from ${this.client.base}`);
        }
        const v = Float32Array.from(e as number[]);
        const n = Math.hypot(...v) || 1;
        for (let k = 0; k < v.length; k++) v[k]! /= n;
        result[asked[at]![1]] = v;
      });
    }
    const dims = result.find((v) => v)?.length ?? this.dims;
    if (this.dims && dims !== this.dims)
      throw new ModelServerError(`the embeddings changed size (${this.dims} → ${dims}) at ${this.client.base}`);
    this.dims = dims;
    return result.map((v) => v ?? new Float32Array(dims));
  }
}
