/**
 * The rows people/group.ts reads and writes when a video's faces join its index's people (issue 33):
 * the video's face segments, the index's known descriptors, new people and their appearances, on
 * either dialect. Called with the analysis write transaction (`tx`), as the faces stage's `apply`.
 */
import { and, asc, eq, sql } from 'drizzle-orm';
import type { Catalog } from '../catalog';

/** The video's `face` segments in time order (id breaks ties), with their extra. */
export function faceSegmentsOf(
  c: Catalog,
  videoId: string,
): Promise<{ id: number; extra: Record<string, unknown> | null }[]> {
  const { segments } = c.t;
  return c.run((db) =>
    db
      .select({ id: segments.id, extra: segments.extra })
      .from(segments)
      .where(and(eq(segments.videoId, videoId), eq(segments.kind, 'face')))
      .orderBy(asc(segments.start), asc(segments.id)),
  );
}

/** Every appearance of the index's people: its person and its descriptor bytes. */
export function indexDescriptors(c: Catalog, indexId: string): Promise<{ personId: string; descriptor: Uint8Array }[]> {
  const { personAppearances } = c.t;
  return c.run((db) =>
    db
      .select({ personId: personAppearances.personId, descriptor: personAppearances.descriptor })
      .from(personAppearances)
      .where(eq(personAppearances.indexId, indexId)),
  );
}

/** A new, unnamed person of the index. */
export async function addPerson(c: Catalog, p: { id: string; indexId: string; userId: string }): Promise<void> {
  const { people } = c.t;
  await c.run((db) => db.insert(people).values({ ...p, name: null, createdAt: new Date() }));
}

/** A face segment joins a person: its appearance row, and its extra without the descriptor. */
export async function addAppearance(
  c: Catalog,
  a: { segmentId: number; personId: string; videoId: string; indexId: string; descriptor: Buffer },
  extra: Record<string, unknown>,
): Promise<void> {
  const { personAppearances, segments } = c.t;
  await c.run(async (db) => {
    await db.insert(personAppearances).values(a);
    await db.update(segments).set({ extra }).where(eq(segments.id, a.segmentId));
  });
}

/** People left without appearances (their videos were removed, or re-analysed) are gone too. */
export async function removeEmptyPeople(c: Catalog, indexId: string): Promise<void> {
  const { people, personAppearances } = c.t;
  await c.run((db) =>
    db
      .delete(people)
      .where(
        and(
          eq(people.indexId, indexId),
          sql`NOT EXISTS (SELECT 1 FROM ${personAppearances} WHERE ${personAppearances.personId} = ${people.id})`,
        ),
      ),
  );
}
