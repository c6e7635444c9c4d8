/**
 * People of an index (faces grouped by likeness) as the rest of the code reads and writes them.
 * `activePerson` is the one access-checked lookup ("this user's person, in an active index"). Both
 * dialects (catalog.ts). The analysis stage that groups faces (src/people/group.ts) still writes
 * these tables itself, in the worker process; it moves here with the analysis stages.
 */
import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import { type Catalog, first } from '../catalog';
import type { Person } from '../schema';

/**
 * The person `personId` of index `indexId` if the index is active (not deleted) and, when `userId` is given, it is
 * that user's; else undefined (a request a signed link authorises gives no user).
 */
export function activePerson(
  c: Catalog,
  indexId: string,
  personId: string,
  userId: string | null,
): Promise<Person | undefined> {
  const { people, mediaIndexes } = c.t;
  return c.run(
    async (db) =>
      first(
        await db
          .select({ person: people })
          .from(people)
          .innerJoin(mediaIndexes, eq(mediaIndexes.id, people.indexId))
          .where(
            and(
              eq(people.id, personId),
              eq(people.indexId, indexId),
              userId === null ? undefined : eq(mediaIndexes.userId, userId),
              isNull(mediaIndexes.deletedAt),
            ),
          )
          .limit(1),
      )?.person,
  );
}

/** The names of an index's people (null: not named yet), by person id. */
export function personNames(c: Catalog, indexId: string): Promise<Map<string, string | null>> {
  const { people } = c.t;
  return c.run(
    async (db) =>
      new Map(
        (await db.select({ id: people.id, name: people.name }).from(people).where(eq(people.indexId, indexId))).map(
          (p) => [p.id, p.name],
        ),
      ),
  );
}

/** An appearance (a faces segment) of the index's people, with what a listing or a thumbnail needs. */
export interface AppearanceRecord {
  person_id: string;
  appearance_id: number;
  video_id: string;
  file_name: string;
  start: number;
  end: number;
  extra: Record<string, unknown> | null;
}

/** The appearances of an index's people (or of one person), in time order within each video. */
export function appearancesIn(c: Catalog, indexId: string, personId?: string): Promise<AppearanceRecord[]> {
  const { personAppearances, segments, videos } = c.t;
  return c.run((db) =>
    db
      .select({
        person_id: personAppearances.personId,
        appearance_id: segments.id,
        video_id: segments.videoId,
        file_name: videos.fileName,
        start: segments.start,
        end: segments.end,
        extra: segments.extra,
      })
      .from(personAppearances)
      .innerJoin(segments, eq(segments.id, personAppearances.segmentId))
      .innerJoin(videos, eq(videos.id, segments.videoId))
      .where(
        personId
          ? and(eq(personAppearances.indexId, indexId), eq(personAppearances.personId, personId))
          : eq(personAppearances.indexId, indexId),
      )
      .orderBy(asc(videos.uploadedAt), asc(segments.videoId), asc(segments.start)),
  );
}

/** The appearances in one video of the index's people, in time order, with each person's name. */
export function appearancesInVideo(
  c: Catalog,
  videoId: string,
): Promise<{ id: string; name: string | null; start: number; end: number }[]> {
  const { personAppearances, people, segments } = c.t;
  return c.run((db) =>
    db
      .select({ id: people.id, name: people.name, start: segments.start, end: segments.end })
      .from(personAppearances)
      .innerJoin(people, eq(people.id, personAppearances.personId))
      .innerJoin(segments, eq(segments.id, personAppearances.segmentId))
      .where(eq(personAppearances.videoId, videoId))
      .orderBy(asc(segments.start)),
  );
}

/** Whether `appearanceId` is one of the person's appearances. */
export function hasAppearance(c: Catalog, personId: string, appearanceId: number): Promise<boolean> {
  const { personAppearances } = c.t;
  return c.run(
    async (db) =>
      !!first(
        await db
          .select({ segmentId: personAppearances.segmentId })
          .from(personAppearances)
          .where(and(eq(personAppearances.segmentId, appearanceId), eq(personAppearances.personId, personId)))
          .limit(1),
      ),
  );
}

export function appearanceCount(c: Catalog, personId: string): Promise<number> {
  const { personAppearances } = c.t;
  return c.run(async (db) => {
    const [row] = await db
      .select({ n: sql<number | string>`count(*)` })
      .from(personAppearances)
      .where(eq(personAppearances.personId, personId));
    // PostgreSQL's count is a bigint, which its driver hands out as text.
    return Number(row!.n);
  });
}

export function setPersonName(c: Catalog, personId: string, name: string | null): Promise<void> {
  const { people } = c.t;
  return c.run(async (db) => {
    await db.update(people).set({ name }).where(eq(people.id, personId));
  });
}

/** Moves every appearance of `fromId` to `toId`, names `toId`, and removes `fromId`: one transaction. */
export function mergePeople(c: Catalog, fromId: string, toId: string, name: string | null): Promise<void> {
  const { people, personAppearances } = c.t;
  return c.write((tx) =>
    tx.run(async (db) => {
      await db.update(personAppearances).set({ personId: toId }).where(eq(personAppearances.personId, fromId));
      await db.update(people).set({ name }).where(eq(people.id, toId));
      await db.delete(people).where(eq(people.id, fromId));
    }),
  );
}

/** A new, unnamed person holding just the one appearance: one transaction. */
export function splitAppearance(
  c: Catalog,
  person: { id: string; indexId: string; userId: string },
  appearanceId: number,
): Promise<void> {
  const { people, personAppearances } = c.t;
  return c.write((tx) =>
    tx.run(async (db) => {
      await db.insert(people).values({ ...person, name: null, createdAt: new Date() });
      await db
        .update(personAppearances)
        .set({ personId: person.id })
        .where(eq(personAppearances.segmentId, appearanceId));
    }),
  );
}
