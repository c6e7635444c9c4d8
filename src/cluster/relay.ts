/**
 * Video changes between the nodes of one catalog (issue 33), so that a video stored or analysed by
 * one node leaves every other node's caches (listings, vectors, search index):
 * - PostgreSQL: NOTIFY/LISTEN (src/storage/notify.ts), within ~100 ms;
 * - SQLite (`vidq worker` on the data directory of a `serve` on the same machine): while another
 *   node of the file is alive, the videos whose `updated_at` moved are read every second.
 */
import type { Logger } from '../log';
import type { Catalog } from '../storage/catalog';
import { openVideoChangeRelay } from '../storage/notify';
import { videosUpdatedSince } from '../storage/repositories/nodes';
import type { VideoChanges } from '../videos/changes';
import type { Heartbeat } from './heartbeat';

/** How often the SQLite relay reads changed videos (while another node is alive). */
const POLL_MS = 1_000;

export interface ChangeRelay {
  close(): Promise<void>;
}

export async function startChangeRelay(d: {
  catalog: Catalog;
  changes: VideoChanges;
  heartbeat: Heartbeat;
  /** The PostgreSQL URL (`--database`); absent on SQLite. */
  database?: string;
  log: Logger;
  /** On SQLite: read other nodes' changes (an API node); false for a worker node, which caches nothing. */
  readOthers?: boolean;
}): Promise<ChangeRelay> {
  if (d.catalog.dialect === 'postgres' && d.database) {
    const relay = await openVideoChangeRelay({
      url: d.database,
      node: d.heartbeat.id,
      onChange: (c) => d.changes.fromOtherNode(c.videoId, c.place),
      onError: (e) => d.log.warn('video change notices: connection lost', { reason: e.message }),
      onReconnect: () => d.log.info('video change notices: connected again'),
    });
    d.changes.relayTo((videoId, place) => relay.publish({ videoId, place }));
    return {
      close: async () => {
        d.changes.relayTo(null);
        await relay.close();
      },
    };
  }
  if (d.readOthers === false) return { close: async () => {} };
  // SQLite: read the changes of others only while there are others.
  let others = false;
  let from = Date.now();
  let busy = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      const now = Date.now();
      others = (await d.heartbeat.nodes()).some((n) => n.id !== d.heartbeat.id);
      if (others) {
        // One second of overlap: a change written just before the last read is not missed.
        for (const v of await videosUpdatedSince(d.catalog, new Date(from - POLL_MS)))
          d.changes.fromOtherNode(v.videoId, { userId: v.userId, indexId: v.indexId });
      }
      from = now;
    } catch (e) {
      d.log.warn('video changes of other nodes not read', { reason: (e as Error).message });
    } finally {
      busy = false;
    }
  }, POLL_MS);
  timer.unref?.();
  return {
    close: async () => clearInterval(timer),
  };
}
