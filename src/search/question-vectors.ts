/**
 * The question embedder with the vectors of recent texts kept: a text asked again (the same question
 * from many users, a client retrying, a dashboard polling) is not embedded again. Only one-text calls
 * are kept (questions and queries are embedded one at a time); answers are never kept, only vectors.
 */
import type { Embedder } from '../analysis/engines/embedder';

/** Texts whose vectors are kept (512 floats each: about 1 MB at 512 texts). */
export const QUESTION_VECTORS_KEPT = 512;

export class RecentVectors implements Embedder {
  private readonly kept = new Map<string, Float32Array>();

  constructor(
    private readonly inner: Embedder,
    private readonly capacity = QUESTION_VECTORS_KEPT,
  ) {}

  get info() {
    return this.inner.info;
  }

  get dims() {
    return this.inner.dims;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (texts.length !== 1) return this.inner.embed(texts);
    const text = texts[0]!;
    const have = this.kept.get(text);
    if (have) {
      // Most recently used last.
      this.kept.delete(text);
      this.kept.set(text, have);
      return [have.slice()];
    }
    const [v] = await this.inner.embed(texts);
    if (!v) return [];
    this.kept.set(text, v.slice());
    if (this.kept.size > this.capacity) this.kept.delete(this.kept.keys().next().value!);
    return [v];
  }

  close(): Promise<void> | void {
    return this.inner.close?.();
  }
}
