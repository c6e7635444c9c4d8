/**
 * Face appearances → people, per index, incrementally: each new appearance joins the person whose
 * centroid (normalised mean of its appearances' descriptors) is nearest by cosine similarity, when
 * that is at least JOIN_SIMILARITY; otherwise it starts a new person. Existing assignments are never
 * moved (a user's merge or split stays as made); a video's appearances are grouped when its faces
 * stage is stored, in that transaction.
 */
import { randomId } from '../ids';
import type { Catalog } from '../storage/catalog';
import { placeOf } from '../storage/repositories/videos';
import {
  addAppearance,
  addPerson,
  faceSegmentsOf,
  indexDescriptors,
  removeEmptyPeople,
} from '../storage/repositories/face-grouping';

/**
 * Measured on the shared clips with FaceRes descriptors (appearance means, cosine): the GRID man
 * at 6 s and at 21 s 0.90; the ten different GRID people and the other clips' faces at most 0.64
 * from each other. 0.72 sits between, nearer the different-people side because a missed merge
 * can be fixed with one click (merge) while a wrong merge needs a split per appearance.
 */
export const JOIN_SIMILARITY = 0.72;

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

export function normalise(v: ArrayLike<number>): number[] {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  n = Math.sqrt(n) || 1;
  return Array.from(v as ArrayLike<number>, (x) => x / n);
}

export function descriptorBlob(d: ArrayLike<number>): Buffer {
  return Buffer.from(new Float32Array(normalise(d)).buffer);
}

export function descriptorOf(b: Uint8Array): Float32Array {
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

export const newPersonId = () => `p_${randomId(16)}`;

/**
 * Groups the `face` segments of a video into its index's people. Their descriptors come in the
 * segments' extra (as the faces stage stored them) and move into person_appearances, so that the
 * segment rows (served to clients) stay small. Returns how many people the appearances joined.
 * `tx` is the catalog's write transaction (either dialect; the rows: repositories/face-grouping.ts).
 */
export async function groupVideoFaces(
  tx: Catalog,
  videoId: string,
): Promise<{ appearances: number; joined: number; started: number }> {
  const video = await placeOf(tx, videoId);
  if (!video) return { appearances: 0, joined: 0, started: 0 };
  const faces = await faceSegmentsOf(tx, videoId);
  const centroids = new Map<string, Float64Array>();
  const known = await indexDescriptors(tx, video.indexId);
  const add = (personId: string, d: ArrayLike<number>) => {
    let c = centroids.get(personId);
    if (!c) centroids.set(personId, (c = new Float64Array(d.length)));
    for (let i = 0; i < d.length; i++) c[i]! += d[i]!;
  };
  for (const k of known) add(k.personId, descriptorOf(k.descriptor));
  let joined = 0;
  let started = 0;
  for (const f of faces) {
    const extra = { ...(f.extra ?? {}) };
    const raw = extra.descriptor;
    delete extra.descriptor;
    if (!Array.isArray(raw) || raw.length === 0) continue;
    const d = normalise(raw as number[]);
    let best: string | null = null;
    let bestSim = JOIN_SIMILARITY;
    for (const [id, c] of centroids) {
      const s = cosine(c, d);
      if (s >= bestSim) [best, bestSim] = [id, s];
    }
    if (best) joined++;
    else {
      best = newPersonId();
      await addPerson(tx, { id: best, indexId: video.indexId, userId: video.userId });
      started++;
    }
    add(best, d);
    await addAppearance(
      tx,
      { segmentId: f.id, personId: best, videoId, indexId: video.indexId, descriptor: descriptorBlob(d) },
      extra,
    );
  }
  await removeEmptyPeople(tx, video.indexId);
  return { appearances: faces.length, joined, started };
}
