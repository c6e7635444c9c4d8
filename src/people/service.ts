/**
 * People of an index for the API: listing, one person's appearances, naming, merging two people
 * and splitting an appearance out. Every call resolves the index for the user first, so another
 * user's (or a deleted) index, and a person of another index, are "not found".
 */
import { UNSAFE_LABEL_CHARS } from '../util/text';
import { join } from 'node:path';
import { badRequest, notFound } from '../errors';
import type { IndexService } from '../indexes/service';
import { runFfmpeg } from '../media/ffmpeg';
import type { Catalog } from '../storage/catalog';
import type { DataDir } from '../storage/files';
import {
  appearanceCount,
  appearancesIn,
  hasAppearance,
  activePerson,
  mergePeople,
  personNames,
  setPersonName,
  splitAppearance,
} from '../storage/repositories/people';
import { frameNear } from '../storage/repositories/videos';
import type { MediaIndex, Person, User } from '../storage/rows';
import { newPersonId } from './group';

export interface PersonView {
  person_id: string;
  name: string | null;
  appearances: number;
  /** Seconds on screen, summed over appearances. */
  seconds: number;
  /** The videos the person appears in (file_id). */
  videos: string[];
  /** Path (to be signed) of the face thumbnail. */
  thumbnail: string;
}

export interface AppearanceView {
  appearance_id: number;
  video_id: string;
  file_name: string;
  start: number;
  end: number;
}

/** A person's appearance with what a thumbnail or an answer needs. */
export interface AppearanceRow extends AppearanceView {
  person_id: string;
  /** Time of the appearance's best face and its box ([x, y, w, h], 0..1). */
  best_t: number;
  box: [number, number, number, number] | null;
}

export const MAX_NAME_LENGTH = 100;

export class PeopleService {
  constructor(
    private readonly d: {
      catalog: Catalog;
      indexes: IndexService;
      files: DataDir;
      ffmpeg: () => Promise<string>;
    },
  ) {}

  /** The user's active index (by id), or 404. */
  index(user: User, indexId: string): Promise<MediaIndex> {
    return this.d.indexes.resolve(user, indexId, { byName: false });
  }

  async list(user: User, indexId: string): Promise<PersonView[]> {
    const idx = await this.index(user, indexId);
    const rows = await this.appearances(idx.id);
    const byPerson = new Map<string, AppearanceRow[]>();
    for (const r of rows) byPerson.set(r.person_id, [...(byPerson.get(r.person_id) ?? []), r]);
    const names = await personNames(this.d.catalog, idx.id);
    return [...byPerson.entries()]
      .map(([id, apps]) => view(idx.id, id, names.get(id) ?? null, apps))
      .sort((a, b) => b.seconds - a.seconds || a.person_id.localeCompare(b.person_id));
  }

  async get(
    user: User,
    indexId: string,
    personId: string,
  ): Promise<PersonView & { appearances_list: AppearanceView[] }> {
    const idx = await this.index(user, indexId);
    const p = await this.person(user, idx.id, personId);
    const apps = await this.appearances(idx.id, p.id);
    if (!apps.length) throw notFound('no such person in this index');
    return {
      ...view(idx.id, p.id, p.name, apps),
      appearances_list: apps.map(({ appearance_id, video_id, file_name, start, end }) => ({
        appearance_id,
        video_id,
        file_name,
        start,
        end,
      })),
    };
  }

  /** Names (or with null, un-names) a person; nothing else changes. */
  async rename(user: User, indexId: string, personId: string, name: string | null): Promise<PersonView> {
    const idx = await this.index(user, indexId);
    const p = await this.person(user, idx.id, personId);
    const clean = name === null ? null : name.trim().replace(/\s+/g, ' ');
    if (clean !== null && (clean.length === 0 || clean.length > MAX_NAME_LENGTH))
      throw badRequest(`field "name" must be 1 to ${MAX_NAME_LENGTH} characters (or null to remove the name)`);
    // The index-name rule: C1 controls (U+0085, U+009B) and bidi controls (U+202E) too (issue 25).
    if (clean !== null && UNSAFE_LABEL_CHARS.test(clean))
      throw badRequest(
        'field "name" must not contain control characters (bidi controls U+202A–202E and U+2066–2069 included) or lone surrogates',
      );
    await setPersonName(this.d.catalog, p.id, clean);
    return view(idx.id, p.id, clean, await this.appearances(idx.id, p.id));
  }

  /** Moves every appearance of `personId` to `into` and removes `personId`; a name on one side only is kept. */
  async merge(user: User, indexId: string, personId: string, into: string): Promise<PersonView> {
    const idx = await this.index(user, indexId);
    const from = await this.person(user, idx.id, personId);
    const to = await this.person(user, idx.id, into, 'field "into": no such person in this index');
    if (from.id === to.id) throw badRequest('field "into" must be another person than the one merged');
    const name = to.name ?? from.name;
    await mergePeople(this.d.catalog, from.id, to.id, name);
    return view(idx.id, to.id, name, await this.appearances(idx.id, to.id));
  }

  /** Moves one appearance out of a person into a new, unnamed person. */
  async split(user: User, indexId: string, personId: string, appearanceId: number): Promise<PersonView> {
    const idx = await this.index(user, indexId);
    const p = await this.person(user, idx.id, personId);
    if (!(await hasAppearance(this.d.catalog, p.id, appearanceId)))
      throw notFound('field "appearance_id": this person has no such appearance');
    if ((await appearanceCount(this.d.catalog, p.id)) < 2)
      throw badRequest("this is the person's only appearance; there is nothing to split it from");
    const id = newPersonId();
    await splitAppearance(this.d.catalog, { id, indexId: idx.id, userId: user.id }, appearanceId);
    return view(idx.id, id, null, await this.appearances(idx.id, id));
  }

  /** The sampled frame and the face box of the person's largest face (for a thumbnail). */
  private async thumbnailSource(
    user: User | null,
    indexId: string,
    personId: string,
  ): Promise<{ frame: string; box: [number, number, number, number] | null }> {
    // Without a user the request came with a signed link for exactly this path: the index must still be live.
    const idx = user ? await this.index(user, indexId) : { id: indexId };
    const p = await this.person(user, idx.id, personId);
    const apps = await this.appearances(idx.id, p.id);
    const best = apps.reduce<AppearanceRow | null>((b, a) => (!b || area(a.box) > area(b.box) ? a : b), null);
    if (!best) throw notFound('no such person');
    const file = await frameNear(this.d.catalog, best.video_id, best.best_t);
    if (!file) throw notFound("the person's frame is not stored");
    return { frame: join(this.d.files.videoDir(best.video_id), 'frames', file), box: best.box };
  }

  /** A JPEG of the person's largest face: its box widened by 10 % (hair, chin), clamped to the frame, 160 px wide. */
  async thumbnail(user: User | null, indexId: string, personId: string): Promise<Uint8Array> {
    const src = await this.thumbnailSource(user, indexId, personId);
    const [x, y, w, h] = src.box ?? [0, 0, 1, 1];
    const x0 = clamp01(x - w * 0.1);
    const y0 = clamp01(y - h * 0.1);
    const x1 = clamp01(x + w * 1.1);
    const y1 = clamp01(y + h * 1.1);
    const f = (v: number) => v.toFixed(4);
    const { out, code } = await runFfmpeg(
      await this.d.ffmpeg(),
      [
        '-i',
        src.frame,
        '-vf',
        `crop=iw*${f(x1 - x0)}:ih*${f(y1 - y0)}:iw*${f(x0)}:ih*${f(y0)},scale=160:-2`,
        '-frames:v',
        '1',
        '-f',
        'image2pipe',
        '-c:v',
        'mjpeg',
        '-q:v',
        '4',
        'pipe:1',
      ],
      { stdout: 'pipe', stderr: 'ignore' },
    );
    if (code !== 0 || out.length === 0) throw notFound("the person's frame could not be read");
    return out;
  }

  /** All appearances of the index's people (of one person), in time order within each video. */
  async appearances(indexId: string, personId?: string): Promise<AppearanceRow[]> {
    const rows = await appearancesIn(this.d.catalog, indexId, personId);
    return rows.map(({ extra, ...r }) => ({
      ...r,
      best_t: typeof extra?.best_t === 'number' ? extra.best_t : r.start,
      box: Array.isArray(extra?.box) ? (extra.box as [number, number, number, number]) : null,
    }));
  }

  /** The person of the index (live, and the user's when a user is given), or 404 with `message`. */
  private async person(
    user: User | null,
    indexId: string,
    personId: string,
    message = 'no such person in this index',
  ): Promise<Person> {
    const p = await activePerson(this.d.catalog, indexId, personId, user?.id ?? null);
    if (!p) throw notFound(message);
    return p;
  }
}

function view(indexId: string, personId: string, name: string | null, apps: AppearanceRow[]): PersonView {
  return {
    person_id: personId,
    name,
    appearances: apps.length,
    seconds: Math.round(apps.reduce((s, a) => s + (a.end - a.start), 0) * 1000) / 1000,
    videos: [...new Set(apps.map((a) => a.video_id))],
    thumbnail: `/indexes/${indexId}/people/${personId}/thumbnail`,
  };
}

const clamp01 = (v: number) => Math.min(1, Math.max(0, v));
const area = (b: [number, number, number, number] | null) => (b ? b[2] * b[3] : 0);
