/**
 * People of an index (faces grouped by likeness) as the rest of the code reads and writes them.
 * `livePerson` is the one access-checked lookup ("this user's person, in a live index").
 */
import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import { writeTx, type Db } from '../db';
import { mediaIndexes, people, type Person, personAppearances, segments, videos } from '../schema';

/**
 * The person `personId` of index `indexId` if the index is live and, when `userId` is given, it is
 * that user's; else undefined (a request a signed link authorises gives no user).
 */
export function livePerson(db: Db, indexId: string, personId: string, userId: string | null): Person | undefined {
  return db
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
    .get()?.person;
}

/** The names of an index's people (null: not named yet), by person id. */
export function personNames(db: Db, indexId: string): Map<string, string | null> {
  return new Map(
    db
      .select({ id: people.id, name: people.name })
      .from(people)
      .where(eq(people.indexId, indexId))
      .all()
      .map((p) => [p.id, p.name]),
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
export function appearancesIn(db: Db, indexId: string, personId?: string): AppearanceRecord[] {
  return db
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
    .orderBy(asc(videos.uploadedAt), asc(segments.videoId), asc(segments.start))
    .all();
}

/** The appearances in one video of the index's people, in time order, with each person's name. */
export function appearancesInVideo(
  db: Db,
  videoId: string,
): { id: string; name: string | null; start: number; end: number }[] {
  return db
    .select({ id: people.id, name: people.name, start: segments.start, end: segments.end })
    .from(personAppearances)
    .innerJoin(people, eq(people.id, personAppearances.personId))
    .innerJoin(segments, eq(segments.id, personAppearances.segmentId))
    .where(eq(personAppearances.videoId, videoId))
    .orderBy(asc(segments.start))
    .all();
}

/** Whether `appearanceId` is one of the person's appearances. */
export function hasAppearance(db: Db, personId: string, appearanceId: number): boolean {
  return !!db
    .select({ segmentId: personAppearances.segmentId })
    .from(personAppearances)
    .where(and(eq(personAppearances.segmentId, appearanceId), eq(personAppearances.personId, personId)))
    .get();
}

export function appearanceCount(db: Db, personId: string): number {
  return db
    .select({ n: sql<number>`count(*)` })
    .from(personAppearances)
    .where(eq(personAppearances.personId, personId))
    .get()!.n;
}

export function setPersonName(db: Db, personId: string, name: string | null): void {
  db.update(people).set({ name }).where(eq(people.id, personId)).run();
}

/** Moves every appearance of `fromId` to `toId`, names `toId`, and removes `fromId`: one transaction. */
export function mergePeople(db: Db, fromId: string, toId: string, name: string | null): void {
  writeTx(db, (tx) => {
    tx.update(personAppearances).set({ personId: toId }).where(eq(personAppearances.personId, fromId)).run();
    tx.update(people).set({ name }).where(eq(people.id, toId)).run();
    tx.delete(people).where(eq(people.id, fromId)).run();
  });
}

/** A new, unnamed person holding just the one appearance: one transaction. */
export function splitAppearance(
  db: Db,
  person: { id: string; indexId: string; userId: string },
  appearanceId: number,
): void {
  writeTx(db, (tx) => {
    tx.insert(people)
      .values({ ...person, name: null, createdAt: new Date() })
      .run();
    tx.update(personAppearances)
      .set({ personId: person.id })
      .where(eq(personAppearances.segmentId, appearanceId))
      .run();
  });
}
