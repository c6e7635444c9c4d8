/**
 * The one entry point for "a video changed": every place that changes a video (an upload stored,
 * failed or matched as a duplicate, its transfer's progress, a removal, an analysis queued,
 * progressed or ended, a live window) calls `changed`, and every cache that holds something of a
 * video subscribes here once (the composition root wires them). A new cache is one `subscribe`,
 * not one more call at each of those places.
 *
 * In a cluster (issue 33) the other nodes' caches hear of it too: `relayTo` hands every change to
 * the relay (NOTIFY on PostgreSQL, src/storage/notify.ts), and the relay gives the other nodes'
 * changes to `fromOtherNode`, which tells this node's caches only.
 */
import type { Catalog } from '../storage/catalog';
import { placeOf } from '../storage/repositories/videos';

/** Whose video it is and in which index: the key of the per-index caches. */
export interface VideoPlace {
  userId: string;
  indexId: string;
}

/** `place` is null only when the video's row is gone and the caller did not say where it was. */
export type VideoChangeListener = (videoId: string, place: VideoPlace | null) => void;

export class VideoChanges {
  private readonly listeners: VideoChangeListener[] = [];
  private relay: ((videoId: string, place: VideoPlace | null) => void) | null = null;

  constructor(private readonly catalog: Catalog) {}

  subscribe(listener: VideoChangeListener): void {
    this.listeners.push(listener);
  }

  /**
   * Tells every cache that the video changed. `place` saves a lookup, and is needed when the row
   * was just deleted (a removal, a failed or duplicate upload): it is read from the row otherwise.
   * With `place` the caches hear it at once; without, once the row is read (the promise resolves
   * then, and never rejects: a cache that misses one change is refreshed by the cron).
   */
  readonly changed = (videoId: string, place?: VideoPlace): Promise<void> => {
    if (place) {
      this.tell(videoId, place);
      return Promise.resolve();
    }
    return placeOf(this.catalog, videoId).then(
      (where) => this.tell(videoId, where ?? null),
      () => this.tell(videoId, null),
    );
  };

  private tell(videoId: string, where: VideoPlace | null): void {
    for (const listener of this.listeners) listener(videoId, where);
    this.relay?.(videoId, where);
  }

  /** Every change of this node also goes to `relay` (the other nodes). */
  relayTo(relay: ((videoId: string, place: VideoPlace | null) => void) | null): void {
    this.relay = relay;
  }

  /** A change another node made: this node's caches drop the video (it is not relayed again). */
  readonly fromOtherNode = (videoId: string, place: VideoPlace | null): void => {
    for (const listener of this.listeners) listener(videoId, place);
  };
}
