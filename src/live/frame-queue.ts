/**
 * A stream's frames waiting for their window, reordered: pushed frames come from several client
 * threads out of order, so a frame waits REORDER_MS after it arrived for the frames before it to
 * join its window. At most one frame per slot of the stream's rate is taken, and a stream that falls
 * behind drops its oldest waiting frames (the caller counts them) so that it stays current.
 */

/** A frame waits this long after it arrived, so that frames sent out of order join its window. */
export const REORDER_MS = 1200;
/** Seconds of frames a stream may have waiting before the oldest are dropped (counted). */
export const BACKLOG_SEC = 30;

export interface PendingFrame {
  /** Stream seconds. */
  t: number;
  /** File name in the stream's `frames` folder. */
  file: string;
  /** Unix ms of its arrival (0: left from before a restart, ready at once). */
  arrivedAt: number;
  bytes: number;
}

export class FrameQueue {
  private pending: PendingFrame[] = [];
  /** Frame slots (floor(t·fps)) taken, so that a stream never analyses more than its rate. */
  private readonly slots = new Set<number>();
  /** The largest queue before the oldest frames are dropped. */
  private readonly maxPending: number;

  constructor(private readonly fps: number) {
    this.maxPending = Math.max(10, Math.ceil(fps * BACKLOG_SEC));
  }

  /** Whether a frame at `t` is one the stream takes (not a second frame for a slot, not before time 0). */
  takes(t: number): boolean {
    return t >= 0 && !this.slots.has(Math.floor(t * this.fps));
  }

  /** Queues a frame (its slot taken): the oldest frames it pushed out of the queue. */
  add(f: PendingFrame): PendingFrame[] {
    this.slots.add(Math.floor(f.t * this.fps));
    this.pending.push(f);
    if (this.pending.length <= this.maxPending) return [];
    // Falling behind: the oldest waiting frames go, the stream stays current.
    this.pending.sort((a, b) => a.t - b.t);
    return this.pending.splice(0, this.pending.length - this.maxPending);
  }

  get size(): number {
    return this.pending.length;
  }

  /** Whether a frame has waited its reordering time. */
  ready(now = Date.now()): boolean {
    return this.pending.some((f) => now - f.arrivedAt >= REORDER_MS);
  }

  /** The next window: up to `max` frames in time order, up to the first that still waits. */
  take(max: number, now = Date.now()): PendingFrame[] {
    this.pending.sort((a, b) => a.t - b.t);
    const cut = this.pending.findIndex((f) => now - f.arrivedAt < REORDER_MS);
    return this.pending.splice(0, Math.min(max, cut < 0 ? this.pending.length : cut));
  }

  /** All waiting frames, taken out (a stream halted). */
  drain(): PendingFrame[] {
    const all = this.pending;
    this.pending = [];
    return all;
  }
}
