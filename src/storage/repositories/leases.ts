/**
 * Named leases (issue 33): work that one node of a cluster does alone (a live stream's windows, the
 * maintenance cron) is done by the holder of its lease. A lease is taken and renewed by one
 * conditional upsert, the same statement on both dialects: it inserts the lease, or takes it over
 * when it expired, or renews it when the caller already holds it; otherwise it changes nothing and
 * returns no row. PostgreSQL locks the conflicting row for the upsert and SQLite writes one
 * statement at a time, so two nodes never both come out holding an unexpired lease.
 *
 * Times come from the caller's clock (`now`): the nodes' clocks must agree to within a few seconds
 * (NTP), which the lease lengths (15 s and more) leave room for.
 */
import { and, asc, eq, gt, lt, or, sql } from 'drizzle-orm';
import { type Catalog, changed } from '../catalog';
import type { LeaseRow } from '../schema';

export type Lease = LeaseRow;

/**
 * Takes or renews `name` for `holder` until now + ttlMs. True when the holder holds it afterwards;
 * false when another node holds it and it has not expired.
 */
export function takeLease(c: Catalog, name: string, holder: string, ttlMs: number, now = new Date()): Promise<boolean> {
  const { leases } = c.t;
  const expiresAt = new Date(now.getTime() + ttlMs);
  return c.run(async (db) => {
    const rows = await db
      .insert(leases)
      .values({ name, holder, takenAt: now, expiresAt })
      .onConflictDoUpdate({
        target: leases.name,
        set: {
          holder: sql`excluded.holder`,
          expiresAt: sql`excluded.expires_at`,
          // A renewal keeps the time it was taken; a take-over starts it again.
          takenAt: sql`CASE WHEN ${leases.holder} = excluded.holder THEN ${leases.takenAt} ELSE excluded.taken_at END`,
        },
        setWhere: or(eq(leases.holder, holder), lt(leases.expiresAt, now)),
      })
      .returning({ holder: leases.holder });
    return rows.length > 0;
  });
}

/** Gives a lease up (only when `holder` holds it): another node may take it at once. */
export function releaseLease(c: Catalog, name: string, holder: string): Promise<boolean> {
  const { leases } = c.t;
  return c.run(
    async (db) => changed(await db.delete(leases).where(and(eq(leases.name, name), eq(leases.holder, holder)))) > 0,
  );
}

/** Gives up every lease of a node (its clean stop). */
export function releaseLeasesOf(c: Catalog, holder: string): Promise<number> {
  const { leases } = c.t;
  return c.run(async (db) => changed(await db.delete(leases).where(eq(leases.holder, holder))));
}

/** The unexpired lease of that name, if any. */
export function currentLease(c: Catalog, name: string, now = new Date()): Promise<Lease | undefined> {
  const { leases } = c.t;
  return c.run(
    async (db) =>
      (
        await db
          .select()
          .from(leases)
          .where(and(eq(leases.name, name), gt(leases.expiresAt, now)))
          .limit(1)
      )[0],
  );
}

/** The unexpired leases whose names start with `prefix` (e.g. `stream:`), by name. */
export function currentLeases(c: Catalog, prefix = '', now = new Date()): Promise<Lease[]> {
  const { leases } = c.t;
  return c.run((db) =>
    db
      .select()
      .from(leases)
      .where(and(sql`substr(${leases.name}, 1, ${prefix.length}) = ${prefix}`, gt(leases.expiresAt, now)))
      .orderBy(asc(leases.name)),
  );
}
