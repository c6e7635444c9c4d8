/**
 * GET /health's `cluster` block (issue 33): which database holds the catalog, the job queue's size,
 * and the nodes seen within the heartbeat's grace. On the single-machine default: `sqlite`, this
 * node, and its queue.
 */
import type { QueueCounts } from '../jobs/queue';
import type { Catalog } from '../storage/catalog';
import type { Heartbeat } from './heartbeat';

export interface ClusterNodeView {
  id: string;
  host: string;
  role: 'api' | 'worker' | 'all';
  version: string;
  started_at: string;
  last_seen: string;
  /** Analysis jobs running on the node at its last heartbeat. */
  jobs: number;
}

export interface ClusterHealth {
  database: 'sqlite' | 'postgres';
  queue: QueueCounts;
  /** This process's node id. */
  node: string;
  nodes: ClusterNodeView[];
}

export async function clusterHealth(d: {
  catalog: Catalog;
  queue: { counts(): Promise<QueueCounts> };
  heartbeat: Heartbeat;
}): Promise<ClusterHealth> {
  const [queue, nodes] = await Promise.all([d.queue.counts(), d.heartbeat.nodes()]);
  return {
    database: d.catalog.dialect,
    queue,
    node: d.heartbeat.id,
    nodes: nodes.map((n) => ({
      id: n.id,
      host: n.host,
      role: n.role,
      version: n.version,
      started_at: n.startedAt.toISOString(),
      last_seen: n.lastSeen.toISOString(),
      jobs: n.jobs,
    })),
  };
}
