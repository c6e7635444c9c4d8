/**
 * Signed upload URLs' grants (POST /api-pre-upload, then one PUT), on either dialect (catalog.ts).
 * Taking a grant is one conditional UPDATE, so only one PUT gets it, on any number of nodes.
 */
import { and, eq, gt, isNull, lt, sql } from 'drizzle-orm';
import { type Catalog, first } from '../catalog';
import type { UploadGrant } from '../schema';

/**
 * Stores a grant unless the user already holds `cap` unused, unexpired ones (0: no cap); grants
 * older than a day go first. The count and the insert are one write transaction (on PostgreSQL
 * under a per-user lock), so two requests at once cannot both take the last place. Returns the
 * count it found when refused, else null.
 */
export function insertUploadGrant(
  c: Catalog,
  grant: Omit<UploadGrant, 'usedAt'>,
  cap: number,
  now: Date,
): Promise<number | null> {
  const { uploadGrants } = c.t;
  return c.write((tx) =>
    tx.run(async (db) => {
      if (tx.dialect === 'postgres')
        await tx.rows(sql`SELECT pg_advisory_xact_lock(hashtext(${`upload-grants:${grant.userId}`}))`);
      // Grants nobody used expire; they go as new ones come, so the table stays small.
      await db.delete(uploadGrants).where(lt(uploadGrants.expiresAt, new Date(now.getTime() - 86_400_000)));
      if (cap) {
        const [row] = await db
          .select({ n: sql<number | string>`count(*)` })
          .from(uploadGrants)
          .where(
            and(eq(uploadGrants.userId, grant.userId), isNull(uploadGrants.usedAt), gt(uploadGrants.expiresAt, now)),
          );
        // PostgreSQL's count is a bigint, which its driver hands out as text.
        const outstanding = Number(row!.n);
        if (outstanding >= cap) return outstanding;
      }
      await db.insert(uploadGrants).values(grant);
      return null;
    }),
  );
}

export function uploadGrant(c: Catalog, key: string): Promise<UploadGrant | undefined> {
  const { uploadGrants } = c.t;
  return c.run(async (db) => first(await db.select().from(uploadGrants).where(eq(uploadGrants.id, key)).limit(1)));
}

/** Takes an unused grant (one conditional UPDATE, so only one PUT gets it); undefined when used already. */
export function takeUploadGrant(c: Catalog, key: string, now: Date): Promise<UploadGrant | undefined> {
  const { uploadGrants } = c.t;
  return c.run(async (db) =>
    first(
      await db
        .update(uploadGrants)
        .set({ usedAt: now })
        .where(and(eq(uploadGrants.id, key), isNull(uploadGrants.usedAt)))
        .returning(),
    ),
  );
}

/** Makes a taken grant usable again. */
export function releaseUploadGrant(c: Catalog, key: string): Promise<void> {
  const { uploadGrants } = c.t;
  return c.run(async (db) => {
    await db.update(uploadGrants).set({ usedAt: null }).where(eq(uploadGrants.id, key));
  });
}
