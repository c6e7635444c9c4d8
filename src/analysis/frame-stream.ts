/**
 * Sampled frames handed from the stage that picks them (visual) to the stages that read them (OCR,
 * objects) while the video is still being decoded, so those stages work during the decode instead
 * of after it. Every reader sees every frame, in order; the stream ends when the producer's stage
 * has finished (its shots are known then), or fails with the producer's error.
 */
/** A sampled frame: its time, its shot's index, its JPEG's file name and absolute path. */
export interface SampledFrame {
  t: number;
  shot: number;
  file: string;
  path: string;
  /** A candidate between kept frames, for the text reader only (not stored; see StageContext.emitProbe). */
  probe?: boolean;
}

export class FrameStream {
  private readonly frames: SampledFrame[] = [];
  private done = false;
  private error: unknown = null;
  private wake: (() => void)[] = [];

  /** A stream that is already complete (the frames were stored by an earlier run). */
  static of(frames: readonly SampledFrame[]): FrameStream {
    const s = new FrameStream();
    for (const f of frames) s.push(f);
    s.end();
    return s;
  }

  push(frame: SampledFrame): void {
    if (this.done) throw new Error('frame pushed after the stream ended');
    this.frames.push(frame);
    this.notify();
  }

  end(): void {
    this.done = true;
    this.notify();
  }

  fail(error: unknown): void {
    if (this.done) return;
    this.error = error ?? new Error('the frame stream failed');
    this.done = true;
    this.notify();
  }

  /** Frames pushed so far (all of them once the stream has ended). */
  get count(): number {
    return this.frames.length;
  }

  get ended(): boolean {
    return this.done;
  }

  /**
   * The frames in order, in batches of what has arrived since the last batch (at most `max`);
   * waits while none is waiting. Ends after the last frame; throws the producer's error.
   */
  async *batches(max = Infinity): AsyncGenerator<SampledFrame[]> {
    let next = 0;
    for (;;) {
      if (this.error) throw this.error;
      if (next < this.frames.length) {
        const batch = this.frames.slice(next, Math.min(this.frames.length, next + max));
        next += batch.length;
        yield batch;
        continue;
      }
      if (this.done) return;
      await new Promise<void>((resolve) => this.wake.push(resolve));
    }
  }

  /** The frames one by one, as they arrive. */
  async *[Symbol.asyncIterator](): AsyncGenerator<SampledFrame> {
    for await (const batch of this.batches()) yield* batch;
  }

  private notify(): void {
    const waiting = this.wake;
    this.wake = [];
    for (const w of waiting) w();
  }
}
