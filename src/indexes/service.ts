/**
 * Media indexes and the listing of their resources.
 *
 * An index is named by its opaque 64-character `index_id` everywhere; where the issue allows it
 * (/remote-upload, /index-resources) also by its human `name`, looked up in the token owner's
 * scope. Another user's index is reported as not found, so ids never leak.
 */
import { UNSAFE_LABEL_CHARS } from '../util/text';
import { badRequest, conflict, notFound } from '../errors';
import { isIndexIdShape, newIndexId } from '../ids';
import type { Catalog } from '../storage/catalog';
import {
  existingIndexIds,
  type IndexLookup,
  indexesDeletedBefore,
  indexListing,
  indexOf,
  insertIndex,
  lockIndexName,
  setIndexDeletedAt,
} from '../storage/repositories/indexes';
import { videosOfIndex } from '../storage/repositories/videos';
import type { IndexType, MediaIndex, User, Video } from '../storage/rows';

/** GET /indexes element (spec: Index). */
export interface IndexView {
  index_id: string;
  name: string;
  count: number;
  created: string;
  total_duration: number;
  deleted: boolean;
}

export type ResolveOptions = IndexLookup;

export function validateIndexName(name: string): string {
  const n = name.trim();
  if (n.length === 0) throw badRequest('index must not be empty: give an index_id or the name of an index');
  if (n.length > 200) throw badRequest('index name is longer than 200 characters');
  // Names are labels (never paths): any printable Unicode is fine; control characters (C0 and C1)
  // and lone surrogates (not text, and not storable as UTF-8) are refused, and so are the bidi
  // embedding/override/isolate controls, which reverse how the rest of a page reads.
  if (UNSAFE_LABEL_CHARS.test(n))
    throw badRequest(
      'index name must not contain control characters (bidi controls U+202A–202E and U+2066–2069 included) or lone surrogates (invalid Unicode)',
    );
  return n;
}

export class IndexService {
  /** Resource rows per (user, index), dropped on every write that touches the index. */
  private readonly resourceCache = new Map<string, Video[]>();

  constructor(private readonly catalog: Catalog) {}

  async list(userId: string, includeDeleted: boolean): Promise<IndexView[]> {
    return (await indexListing(this.catalog, userId, includeDeleted)).map((r) => ({
      index_id: r.index.id,
      name: r.index.name,
      count: r.count,
      created: r.index.createdAt.toISOString(),
      total_duration: Math.round(r.total * 1000) / 1000,
      deleted: r.index.deletedAt !== null,
    }));
  }

  /** Finds the user's index by id (or name); 404 when missing, deleted or someone else's. */
  async resolve(user: User, ref: string, opts: ResolveOptions): Promise<MediaIndex> {
    const found = await this.find(user, ref, opts);
    if (!found) throw notFound(`index ${JSON.stringify(ref.slice(0, 80))} was not found`);
    return found;
  }

  find(user: User, ref: string, opts: ResolveOptions, c: Catalog = this.catalog): Promise<MediaIndex | undefined> {
    return indexOf(c, user.id, ref, opts);
  }

  /**
   * The user's active index of that name, created when new. `created` tells which. `tx`: the
   * write transaction the caller runs it in (its upload's row goes in with it).
   */
  findOrCreateByName(tx: Catalog, user: User, ref: string): Promise<{ index: MediaIndex; created: boolean }> {
    // An id-shaped name that matched nothing was meant as an id: "not found", not a new index.
    return this.findOrInsert(tx, user, ref, 'standard', () =>
      notFound('index: no index has this id; names of 64 URL-safe characters are reserved for index ids'),
    );
  }

  /** The user's active index of that name, else a new one of `type`; an id-shaped new name is refused with `reserved`. */
  private async findOrInsert(
    tx: Catalog,
    user: User,
    ref: string,
    type: IndexType,
    reserved: () => Error,
  ): Promise<{ index: MediaIndex; created: boolean }> {
    // PostgreSQL's text has no NUL (a query given one fails): such a name is refused before any lookup.
    if (ref.includes('\u0000')) validateIndexName(ref);
    await lockIndexName(tx, user.id, ref);
    const existing = await this.find(user, ref, { byName: true }, tx);
    if (existing) return { index: existing, created: false };
    const name = validateIndexName(ref);
    if (isIndexIdShape(name)) throw reserved();
    const index: MediaIndex = { id: newIndexId(), userId: user.id, name, createdAt: new Date(), deletedAt: null, type };
    await insertIndex(tx, index);
    return { index, created: true };
  }

  /**
   * `GET /create-index`: creates the user's index of that name and type. An index of that name
   * and type that exists already is answered as it is (`created: false`); one of the other type is
   * a 409, since its videos or streams would not fit the type asked for.
   */
  async create(user: User, ref: string, type: IndexType): Promise<{ index: MediaIndex; created: boolean }> {
    const r = await this.catalog.write((tx) =>
      this.findOrInsert(tx, user, ref, type, () =>
        badRequest('index: names of 64 URL-safe characters are reserved for index ids; choose another name'),
      ),
    );
    if (r.index.type !== type)
      throw conflict(
        `index ${JSON.stringify(r.index.name)} exists already as a ${r.index.type} index; use another name for a ${type} index`,
      );
    this.invalidate(user.id, r.index.id);
    return r;
  }

  /**
   * The index a live call (`/add-stream`) names, or the error the hosted SDK understands there:
   * it reads these from a 200 answer's `error` field (moonshine-sdk.md), not from a status.
   */
  async forStreaming(
    user: User,
    ref: string,
  ): Promise<
    { index: MediaIndex } | { error: 'index does not exist' | 'this index is not compatible with streaming' }
  > {
    const index = typeof ref === 'string' && ref !== '' ? await this.find(user, ref, { byName: true }) : undefined;
    if (!index) return { error: 'index does not exist' };
    if (index.type !== 'performance') return { error: 'this index is not compatible with streaming' };
    return { index };
  }

  async softDelete(user: User, indexId: string): Promise<MediaIndex> {
    const idx = await this.resolve(user, indexId, { byName: false });
    const deletedAt = new Date();
    await setIndexDeletedAt(this.catalog, idx.id, deletedAt);
    this.invalidate(user.id, idx.id);
    return { ...idx, deletedAt };
  }

  async restore(user: User, indexId: string): Promise<MediaIndex> {
    const idx = await this.resolve(user, indexId, { byName: false, includeDeleted: true });
    if (idx.deletedAt === null) return idx;
    const clash = await this.find(user, idx.name, { byName: true });
    if (clash && clash.id !== idx.id)
      throw badRequest(`another active index is already named ${JSON.stringify(idx.name)}; rename or delete it first`);
    await setIndexDeletedAt(this.catalog, idx.id, null);
    this.invalidate(user.id, idx.id);
    return { ...idx, deletedAt: null };
  }

  /** Soft-deleted indexes older than the cutoff, for the purge. */
  deletedBefore(cutoff: Date): Promise<MediaIndex[]> {
    return indexesDeletedBefore(this.catalog, cutoff);
  }

  videosOf(indexId: string): Promise<Video[]> {
    return videosOfIndex(this.catalog, indexId);
  }

  /** Resources of an index, from the cache when warm. */
  async resources(userId: string, indexId: string): Promise<Video[]> {
    const key = `${userId}:${indexId}`;
    const cached = this.resourceCache.get(key);
    if (cached) return cached;
    // A change while the rows are read drops them (invalidate): they are not kept then.
    const generation = this.generation;
    const rows = await this.videosOf(indexId);
    if (generation === this.generation) this.resourceCache.set(key, rows);
    return rows;
  }

  /** Counts invalidations, so that rows read before one are not cached after it. */
  private generation = 0;

  invalidate(userId: string, indexId: string): void {
    this.generation++;
    this.resourceCache.delete(`${userId}:${indexId}`);
  }

  /** Re-reads every cached listing (cron), and forgets listings of indexes that are gone. */
  async refreshCache(): Promise<number> {
    const keys = [...this.resourceCache.keys()];
    const alive = await existingIndexIds(
      this.catalog,
      keys.map((k) => k.slice(k.indexOf(':') + 1)),
    );
    for (const key of keys) {
      const indexId = key.slice(key.indexOf(':') + 1);
      if (!alive.has(indexId)) {
        this.resourceCache.delete(key);
        continue;
      }
      const generation = this.generation;
      const rows = await this.videosOf(indexId);
      if (generation === this.generation) this.resourceCache.set(key, rows);
      else this.resourceCache.delete(key);
    }
    return keys.length;
  }
}
