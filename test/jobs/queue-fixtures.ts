/** Users, indexes and queued videos for the job queue's tests (both dialects). */
import type { JobQueue } from '../../src/jobs/queue';
import type { Catalog } from '../../src/storage/catalog';

/** A user with an index. */
export async function addUser(c: Catalog, id: string): Promise<string> {
  const { users, mediaIndexes } = c.t;
  await c.run(async (db) => {
    await db.insert(users).values({ id, name: id, createdAt: new Date() });
    await db.insert(mediaIndexes).values({ id: `i_${id}`, userId: id, name: 'idx', createdAt: new Date() });
  });
  return `i_${id}`;
}

/** A stored video, queued for analysis in the same transaction. */
export async function addVideo(
  c: Catalog,
  q: JobQueue,
  id: string,
  userId: string,
  durationSec: number,
  at = new Date(),
): Promise<void> {
  const { videos } = c.t;
  await c.write(async (tx) => {
    await tx.run((db) =>
      db.insert(videos).values({
        id,
        indexId: `i_${userId}`,
        userId,
        sourceUrl: 'upload',
        fileName: `${id}.mp4`,
        storagePath: `media/${id}/source.mp4`,
        durationSec,
        status: 'processing',
        progress: 0,
        uploadedAt: at,
        updatedAt: at,
      }),
    );
    await q.enqueueIn(tx, id, at);
  });
}
