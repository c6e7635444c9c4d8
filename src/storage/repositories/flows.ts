/**
 * The reads of the flows (src/flows/: search by image, scenes, moderation, the SDK search) on
 * either dialect (issue 33). Each covers every video or segment it is given in one statement.
 */
import { and, asc, eq, sql } from 'drizzle-orm';
import type { Catalog } from '../catalog';
import type { Frame, Video } from '../schema';
import { inJson } from './vectors';

/** A video's sampled frames in time order. */
export function videoFrames(c: Catalog, videoId: string): Promise<Frame[]> {
  const f = c.t.frames;
  return c.run((db) => db.select().from(f).where(eq(f.videoId, videoId)).orderBy(asc(f.t)));
}

/** These videos of an index (those that are in it). */
export function videosInIndex(c: Catalog, indexId: string, videoIds: readonly string[]): Promise<Video[]> {
  if (videoIds.length === 0) return Promise.resolve([]);
  const v = c.t.videos;
  return c.run((db) =>
    db
      .select()
      .from(v)
      .where(and(eq(v.indexId, indexId), inJson(c, sql`${v.id}`, videoIds, 'text'))),
  );
}

/** The face appearances of an index in these videos, with their descriptors and times. */
export function faceDescriptors(
  c: Catalog,
  indexId: string,
  videoIds: readonly string[],
): Promise<{ segmentId: number; descriptor: Buffer; start: number; end: number; videoId: string }[]> {
  if (videoIds.length === 0) return Promise.resolve([]);
  const { personAppearances: pa, segments: s } = c.t;
  return c.run((db) =>
    db
      .select({ segmentId: pa.segmentId, descriptor: pa.descriptor, start: s.start, end: s.end, videoId: s.videoId })
      .from(pa)
      .innerJoin(s, eq(s.id, pa.segmentId))
      .where(and(eq(pa.indexId, indexId), inJson(c, sql`${pa.videoId}`, videoIds, 'text'))),
  ) as Promise<{ segmentId: number; descriptor: Buffer; start: number; end: number; videoId: string }[]>;
}

/** The people (id and name) whose appearances these face segments are. */
export function peopleOfSegments(
  c: Catalog,
  segmentIds: readonly number[],
): Promise<{ id: string; name: string | null }[]> {
  if (segmentIds.length === 0) return Promise.resolve([]);
  const { personAppearances: pa, people: p } = c.t;
  return c.run((db) =>
    db
      .select({ id: p.id, name: p.name })
      .from(pa)
      .innerJoin(p, eq(p.id, pa.personId))
      .where(inJson(c, sql`${pa.segmentId}`, segmentIds, 'int')),
  );
}
