/**
 * Video changes between the nodes of a cluster on PostgreSQL (issue 33): each node publishes the
 * videos that changed with NOTIFY and LISTENs on a dedicated connection (a pooled connection
 * cannot hold a LISTEN), so that a video stored or analysed by one node leaves every other node's
 * caches (listing, vectors, search index) at once, well within 2 s.
 *
 * Changes are sent in batches every `flushMs` (progress ticks of one video come many times a
 * second; one notice per video per batch is enough), each NOTIFY payload under PostgreSQL's
 * 8000-byte limit. A node skips its own notices (it told its own caches already). The connection
 * is made again after a loss; notices sent while it was down are lost, so every change seen after
 * a reconnect counts as a change of everything (`onReconnect`: the caller drops its caches).
 */
import { listenChannel } from './listen';

export const VIDEO_CHANGES_CHANNEL = 'vidq_video_changed';
/** Payloads stay under this (PostgreSQL's limit is 8000 bytes). */
const MAX_PAYLOAD = 7_000;

export interface RemoteVideoChange {
  videoId: string;
  /** Null when the publisher did not know (the row gone and no place given). */
  place: { userId: string; indexId: string } | null;
}

export interface VideoChangeRelay {
  /** Queues a change of this node for the other nodes. */
  publish(change: RemoteVideoChange): void;
  /** Sends what is queued now (tests; the timer does it every flushMs). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface RelayOptions {
  url: string;
  /** This node's id: its own notices are skipped. */
  node: string;
  /** A change made by another node. */
  onChange: (change: RemoteVideoChange) => void;
  /** The connection came back after a loss: notices may have been missed. */
  onReconnect?: () => void;
  onError?: (e: Error) => void;
  /** @default 100 */
  flushMs?: number;
}

type Wire = { n: string; c: [string, string | null, string | null][] };

/** Connects, LISTENs, and returns the relay (rejects when the first connection fails). */
export async function openVideoChangeRelay(o: RelayOptions): Promise<VideoChangeRelay> {
  const pending = new Map<string, RemoteVideoChange>();
  let closed = false;
  const listener = await listenChannel(o.url, VIDEO_CHANGES_CHANNEL, {
    onNotice: (payload) => {
      if (!payload) return;
      let wire: Wire;
      try {
        wire = JSON.parse(payload);
      } catch {
        return;
      }
      if (wire.n === o.node) return;
      for (const [videoId, userId, indexId] of wire.c)
        o.onChange({ videoId, place: userId && indexId ? { userId, indexId } : null });
    },
    ...(o.onReconnect && { onReconnect: o.onReconnect }),
    ...(o.onError && { onError: o.onError }),
  });

  const flush = async (): Promise<void> => {
    const c = listener.client;
    if (!pending.size || !c) return;
    const batch = [...pending.values()];
    pending.clear();
    let wire: Wire = { n: o.node, c: [] };
    const send = async () => {
      if (wire.c.length) await c.query('SELECT pg_notify($1, $2)', [VIDEO_CHANGES_CHANNEL, JSON.stringify(wire)]);
      wire = { n: o.node, c: [] };
    };
    try {
      for (const ch of batch) {
        const entry: Wire['c'][number] = [ch.videoId, ch.place?.userId ?? null, ch.place?.indexId ?? null];
        if (JSON.stringify(wire).length + JSON.stringify(entry).length + 1 > MAX_PAYLOAD) await send();
        wire.c.push(entry);
      }
      await send();
    } catch (e) {
      o.onError?.(e as Error);
    }
  };

  const timer = setInterval(() => void flush(), o.flushMs ?? 100);
  timer.unref?.();

  return {
    publish(change) {
      if (!closed) pending.set(change.videoId, change);
    },
    flush,
    async close() {
      if (closed) return;
      await flush();
      closed = true;
      clearInterval(timer);
      await listener.close();
    },
  };
}
