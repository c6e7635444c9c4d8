/**
 * The nodes of a cluster (issue 33): one row per running `serve` or `vidq worker`, registered at
 * its start and refreshed by its heartbeat (src/cluster/heartbeat.ts). Both dialects (catalog.ts).
 */
import { and, asc, eq, gt, gte, lt } from 'drizzle-orm';
import { type Catalog, changed } from '../catalog';
import type { NodeRole, NodeRow } from '../schema';

export type { NodeRole } from '../schema';
export type ClusterNode = NodeRow;

/** Registers a node (or, for a row pruned while the node was cut off, registers it again). */
export function registerNode(c: Catalog, node: ClusterNode): Promise<void> {
  const { nodes } = c.t;
  return c.run(async (db) => {
    await db
      .insert(nodes)
      .values(node)
      .onConflictDoUpdate({ target: nodes.id, set: { lastSeen: node.lastSeen, jobs: node.jobs } });
  });
}

/** A heartbeat: last seen now, with its running jobs. False when the row is gone (pruned). */
export function touchNode(c: Catalog, id: string, at: Date, jobs: number): Promise<boolean> {
  const { nodes } = c.t;
  return c.run(async (db) => changed(await db.update(nodes).set({ lastSeen: at, jobs }).where(eq(nodes.id, id))) > 0);
}

/** A clean stop: the node leaves the list at once. */
export function removeNode(c: Catalog, id: string): Promise<void> {
  const { nodes } = c.t;
  return c.run(async (db) => {
    await db.delete(nodes).where(eq(nodes.id, id));
  });
}

/** The nodes seen since `since` (all when absent), by role, then oldest first. */
export function listNodes(c: Catalog, since?: Date): Promise<ClusterNode[]> {
  const { nodes } = c.t;
  return c.run((db) =>
    db
      .select()
      .from(nodes)
      .where(since ? gte(nodes.lastSeen, since) : undefined)
      .orderBy(asc(nodes.role), asc(nodes.startedAt), asc(nodes.id)),
  );
}

/** Forgets nodes unseen since `before` (killed, never stopped cleanly). The count. */
export function pruneNodes(c: Catalog, before: Date): Promise<number> {
  const { nodes } = c.t;
  return c.run(async (db) => changed(await db.delete(nodes).where(lt(nodes.lastSeen, before))));
}

/** Whether the node is registered and seen since `since`. */
export function nodeSeen(c: Catalog, id: string, since: Date): Promise<boolean> {
  const { nodes } = c.t;
  return c.run(
    async (db) =>
      (
        await db
          .select({ id: nodes.id })
          .from(nodes)
          .where(and(eq(nodes.id, id), gte(nodes.lastSeen, since)))
          .limit(1)
      ).length > 0,
  );
}

export const NODE_ROLE_NAMES: Record<NodeRole, string> = {
  api: 'API only',
  worker: 'analysis only',
  all: 'API and analysis',
};

/** Running jobs claimed by these worker processes (their worker ids start with one of the prefixes). */
export function runningJobsOf(c: Catalog, workerPrefixes: string[]): Promise<number> {
  const { jobs } = c.t;
  if (!workerPrefixes.length) return Promise.resolve(0);
  return c.run(async (db) => {
    const rows = await db.select({ workerId: jobs.workerId }).from(jobs).where(eq(jobs.state, 'running'));
    return rows.filter((r) => workerPrefixes.some((p) => r.workerId?.startsWith(p))).length;
  });
}

/**
 * Videos changed since `since` (their `updated_at`), with their place: how an API node on the
 * SQLite file hears of the analysis another node on the same file does (src/cluster/relay.ts).
 */
export function videosUpdatedSince(
  c: Catalog,
  since: Date,
): Promise<{ videoId: string; userId: string; indexId: string }[]> {
  const { videos } = c.t;
  return c.run((db) =>
    db
      .select({ videoId: videos.id, userId: videos.userId, indexId: videos.indexId })
      .from(videos)
      .where(gt(videos.updatedAt, since)),
  );
}

/**
 * The catalog's id, kept in the catalog: the first caller's `proposed` id (a SQLite install's
 * data-directory id, so that its media folder's marker stays valid), and the same for every later
 * caller and node.
 */
export function catalogIdentity(c: Catalog, proposed: string): Promise<string> {
  const { catalogSettings } = c.t;
  return c.run(async (db) => {
    await db.insert(catalogSettings).values({ key: 'catalog_id', value: proposed }).onConflictDoNothing();
    const row = (await db.select().from(catalogSettings).where(eq(catalogSettings.key, 'catalog_id')).limit(1))[0];
    return row?.value ?? proposed;
  });
}
