/**
 * The one invariant checker of the hardening tests, run after every scenario on a data directory
 * and its catalog: the SQLite file in the data directory, or the PostgreSQL database of `database`
 * (issue 33). A small reader per dialect gives the same rows; every check below runs on them. It
 * returns every violation as a sentence; a healthy place gives []. Run it with the servers stopped,
 * or at least idle (`settled: false` while work may be in flight).
 *
 *  - no resource stuck in a non-final state (queued/downloading/processing) once `settled`;
 *    a failed resource says why; a processing one has a live analysis job (on PostgreSQL also a
 *    live pg-boss job that a worker will claim)
 *  - no orphan on disk: every folder under media/ has a row, tmp/ is empty, no frames.partial of a
 *    finished video, no folder for a row that never stored a file
 *  - no row pointing at a missing file (source files, frame files)
 *  - no segment duplicated (same video, kind, start, end, text), none of vanished videos
 *  - no segment lost: every stage output a video records (metadata.analysis.<kind>, written in the
 *    transaction that stores the stage's segments) counts exactly the rows of its kinds; a video
 *    whose analysis finished has the visual stage's output (`shots`: every pipeline runs it) and its frames
 *  - no video analysed to completion twice: at most one `video.ready` webhook event and (on
 *    PostgreSQL) one completed pg-boss analysis per video, unless it was reanalysed; a finished
 *    job on PostgreSQL has exactly one completed pg-boss attempt
 *  - people: every appearance is a face segment of a video of the person's own index; no person
 *    without appearances; no face segment of a ready video without its person
 *  - every limited balance equals the sum of its credit_events and is never negative
 *  - a video made through a signed upload URL used that URL, and belongs to its user
 */
import { Database } from 'bun:sqlite';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';

/** Where a server keeps its state: the data directory, and the catalog when it is not the SQLite file there. */
export interface Place {
  dataDir: string;
  /** postgres://… (absent: the SQLite file `vidq.db` in dataDir). */
  database?: string;
  /** --media-dir (default: dataDir). */
  mediaDir?: string;
}

export interface CheckOptions {
  /** No analysis or download may still be running (the server is stopped or idle). @default true */
  settled?: boolean;
}

export interface Snapshot {
  videos: {
    id: string;
    status: string;
    stage: string | null;
    error: string | null;
    storage_path: string | null;
    index_id: string;
  }[];
  indexes: { id: string; deleted_at: number | null }[];
  segments: number;
  users: { id: string; credits: number | null; ledger: number | null; events: number }[];
}

/** Plain rows from either catalog: `?` placeholders, numbers as numbers, times as ms, JSON parsed by the caller. */
export interface CatalogReader {
  dialect: 'sqlite' | 'postgres';
  all<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Whether a table exists (pg-boss's lives in its own schema: 'pgboss.job'). */
  has(table: string): Promise<boolean>;
  close(): Promise<void>;
}

const placeOf = (where: string | Place): Place => (typeof where === 'string' ? { dataDir: where } : where);

/** A read-only view of the place's catalog. */
export async function openCatalogReader(where: string | Place): Promise<CatalogReader> {
  const p = placeOf(where);
  if (!p.database) {
    const db = new Database(join(p.dataDir, 'vidq.db'), { readonly: true });
    return {
      dialect: 'sqlite',
      all: async <T>(q: string, params: unknown[] = []) => db.query(q).all(...(params as never[])) as T[],
      has: async (table) =>
        !table.includes('.') && !!db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table),
      close: async () => db.close(),
    };
  }
  const c = new Client({ connectionString: p.database, connectionTimeoutMillis: 5000 });
  // A kept connection ended by the database's drop is no crash; the next query says so.
  c.on('error', () => {});
  await c.connect();
  const all = async <T>(q: string, params: unknown[] = []) => {
    let n = 0;
    const r = await c.query(
      q.replace(/\?/g, () => `$${++n}`),
      params,
    );
    return r.rows.map(plain) as T[];
  };
  return {
    dialect: 'postgres',
    all,
    has: async (table) => (await all<{ t: string | null }>('SELECT to_regclass(?) AS t', [table]))[0]?.t != null,
    close: () => c.end(),
  };
}

/** PostgreSQL's bigint/numeric (strings), timestamps (Date) and booleans, as SQLite gives them. */
function plain(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row))
    out[k] =
      v instanceof Date
        ? v.getTime()
        : typeof v === 'boolean'
          ? Number(v)
          : typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) && NUMERIC.has(k)
            ? Number(v)
            : v;
  return out;
}
/** Columns that PostgreSQL may send as strings (bigint, count, sum). */
const NUMERIC = new Set(['n', 'credits', 'ledger', 'events', 'same_user']);

const json = (v: unknown): any => (typeof v === 'string' ? JSON.parse(v) : (v ?? null));

/**
 * The count each stage's summary keeps of the rows it stored, by kind. A stage whose summary
 * has no such count (embeddings: vectors, not segments) is not checked here. Transcripts are
 * written by two stages (speech, then subtitles with `extra.source = "subtitles"`), so each is
 * compared with its own.
 */
const STAGE_COUNTS: Record<string, [field: string, rows: string][]> = {
  shots: [
    ['shots', 'shot'],
    ['frames', 'frames'],
  ],
  ocr: [['segments', 'ocr']],
  objects: [['spans', 'object']],
  faces: [['appearances', 'face']],
  speech: [
    ['segments', 'speech'],
    ['transcripts', 'transcript:speech'],
  ],
  subtitles: [['segments', 'transcript:subtitles']],
  captions: [['captions', 'caption']],
};

export async function checkInvariants(
  where: string | Place,
  opts: CheckOptions = {},
): Promise<{ violations: string[]; snapshot: Snapshot }> {
  const p = placeOf(where);
  const dataDir = p.dataDir;
  const mediaRoot = p.mediaDir ?? dataDir;
  const settled = opts.settled ?? true;
  const v: string[] = [];
  const db = await openCatalogReader(p);
  try {
    const videoRows = await db.all<Snapshot['videos'][number] & { analysis: unknown }>(
      'SELECT id, status, stage, error, storage_path, index_id, analysis FROM videos ORDER BY id',
    );
    const videos: Snapshot['videos'] = videoRows.map(({ analysis: _, ...x }) => x);
    const analysisOf = new Map(videoRows.map((x) => [x.id, json(x.analysis) as Record<string, any> | null]));
    const indexes = await db.all<Snapshot['indexes'][number]>('SELECT id, deleted_at FROM media_indexes ORDER BY id');
    const jobs = (
      await db.all<{ video_id: string; state: string; stage: string; only: unknown }>(
        'SELECT video_id, state, stage, "only" FROM jobs',
      )
    ).map((j) => ({ ...j, only: json(j.only) as string[] | null }));
    const jobOf = new Map(jobs.map((j) => [j.video_id, j]));
    const indexIds = new Set(indexes.map((i) => i.id));
    const byId = new Map(videos.map((x) => [x.id, x]));
    // pg-boss's analysis jobs (PostgreSQL): what hands the work out, and what records each completion.
    const boss = (await db.has('pgboss.job'))
      ? await db.all<{ video_id: string; name: string; state: string; output: unknown }>(
          "SELECT data->>'videoId' AS video_id, name, state::text AS state, output FROM pgboss.job WHERE name IN ('vidq-analysis', 'vidq-analysis-dead')",
        )
      : null;

    for (const x of videos) {
      const name = `video ${x.id} (${x.status}/${x.stage})`;
      if (!indexIds.has(x.index_id)) v.push(`${name} belongs to a missing index ${x.index_id}`);
      if (settled && ['queued', 'downloading', 'processing'].includes(x.status))
        v.push(`${name} is stuck in a non-final state`);
      if (x.status === 'failed' && !(x.error && x.error.trim().length > 10)) v.push(`${name} failed without a reason`);
      if (x.status === 'processing') {
        const j = jobOf.get(x.id);
        if (!j || !['pending', 'running'].includes(j.state))
          v.push(`${name} is processing but has no live analysis job (${j?.state ?? 'none'})`);
      }
      if ((x.status === 'ready' || x.status === 'processing') && !x.storage_path) v.push(`${name} has no stored file`);
      if (x.storage_path && !existsSync(join(mediaRoot, x.storage_path)))
        v.push(`${name} points at a missing file ${x.storage_path}`);
      const dir = join(mediaRoot, 'media', x.id);
      if (!x.storage_path && existsSync(dir))
        v.push(`${name} never stored a file but has a folder on disk (${readdirSync(dir).join(', ') || 'empty'})`);
      if (settled && x.status === 'ready' && existsSync(join(dir, 'frames.partial')))
        v.push(`${name} left frames.partial behind`);
    }
    for (const j of jobs) {
      const x = byId.get(j.video_id);
      if (!x) v.push(`job of a missing video ${j.video_id}`);
      else if (j.state === 'done' && x.status !== 'ready') v.push(`video ${x.id} is ${x.status} but its job is done`);
      if (settled && j.state === 'running') v.push(`job of ${j.video_id} is still running`);
      // On PostgreSQL the rows are only the visible status: a waiting or running job that pg-boss
      // does not hold would never be claimed again.
      if (boss && (j.state === 'pending' || j.state === 'running')) {
        const live = boss.some((b) => b.video_id === j.video_id && ['created', 'retry', 'active'].includes(b.state));
        if (!live) v.push(`job of ${j.video_id} is ${j.state} but pg-boss holds no live job for it`);
      }
    }

    // Disk: every media folder has a row; tmp/ is empty.
    const mediaDir = join(mediaRoot, 'media');
    for (const d of existsSync(mediaDir) ? readdirSync(mediaDir) : []) {
      // A shared media folder's catalog marker (--media-dir; storage/files.ts) is no video's.
      if (d === '.vidq-catalog') continue;
      if (!byId.has(d))
        v.push(
          `orphan folder media/${d} (${statSync(join(mediaDir, d)).isDirectory() ? readdirSync(join(mediaDir, d)).join(', ') : 'file'}) has no row`,
        );
    }
    const tmpDir = join(dataDir, 'tmp');
    const tmp = existsSync(tmpDir) ? readdirSync(tmpDir) : [];
    if (settled && tmp.length) v.push(`tmp/ is not empty: ${tmp.join(', ')}`);

    // Frames.
    const frames = await db.all<{ video_id: string; file: string }>('SELECT video_id, file FROM frames');
    const framesOf = new Map<string, number>();
    for (const f of frames) {
      framesOf.set(f.video_id, (framesOf.get(f.video_id) ?? 0) + 1);
      if (!byId.has(f.video_id)) v.push(`frame row of a missing video ${f.video_id}`);
      else if (!existsSync(join(mediaDir, f.video_id, 'frames', f.file)))
        v.push(`frame row ${f.video_id}/${f.file} points at a missing file`);
    }

    // Segments: none duplicated, none of a missing video, none lost.
    const segs = await db.all<{
      video_id: string;
      kind: string;
      start: number;
      end: number;
      text: string;
      extra: unknown;
    }>('SELECT video_id, kind, start, "end", text, extra FROM segments');
    const seen = new Map<string, number>();
    const rowsOf = new Map<string, Map<string, number>>();
    let strays = 0;
    for (const s of segs) {
      const k = JSON.stringify([s.video_id, s.kind, s.start, s.end, s.text]);
      seen.set(k, (seen.get(k) ?? 0) + 1);
      if (!byId.has(s.video_id)) strays++;
      const by = rowsOf.get(s.video_id) ?? new Map<string, number>();
      rowsOf.set(s.video_id, by);
      const kind =
        s.kind === 'transcript'
          ? `transcript:${json(s.extra)?.source === 'subtitles' ? 'subtitles' : 'speech'}`
          : s.kind;
      by.set(kind, (by.get(kind) ?? 0) + 1);
    }
    for (const [k, n] of seen) {
      if (n < 2) continue;
      const [video, kind, start, end, text] = JSON.parse(k) as [string, string, number, number, string];
      v.push(`duplicate segment x${n}: ${video} ${kind} ${start}-${end} ${JSON.stringify(text).slice(0, 60)}`);
    }
    if (strays) v.push(`${strays} segments of missing videos`);
    for (const x of videos) {
      const a = analysisOf.get(x.id);
      const job = jobOf.get(x.id);
      if (!job) continue; // live streams store windows as they come, with no stage summaries
      const have = rowsOf.get(x.id) ?? new Map<string, number>();
      const count = (what: string) => (what === 'frames' ? (framesOf.get(x.id) ?? 0) : (have.get(what) ?? 0));
      for (const [stage, fields] of Object.entries(STAGE_COUNTS)) {
        const summary = a?.[stage];
        if (!summary || typeof summary !== 'object' || summary.unavailable || summary.skipped) continue;
        for (const [field, what] of fields) {
          // The subtitles of a resumed group are stored after its speech: only a finished video must agree.
          if (what.startsWith('transcript:') && x.status !== 'ready') continue;
          const recorded = summary[field];
          if (typeof recorded !== 'number') {
            v.push(`video ${x.id}: the ${stage} stage's output records no count "${field}"`);
            continue;
          }
          if (recorded !== count(what))
            v.push(
              `video ${x.id} (${x.status}): the ${stage} stage stored ${recorded} ${what} rows, the catalog has ${count(what)}`,
            );
        }
      }
      if (job.state === 'done' && !a?.shots)
        v.push(`video ${x.id} finished its analysis but has no output of the visual stage`);
    }
    const segmentCount = segs.length;

    // Completions: none twice. A reanalysis (the job's `only`) finishes a video once more.
    const completions = new Map<string, { webhooks: number; boss: number }>();
    const bump = (id: string, k: 'webhooks' | 'boss') => {
      const c = completions.get(id) ?? { webhooks: 0, boss: 0 };
      c[k]++;
      completions.set(id, c);
    };
    for (const e of await db.all<{ video_id: string }>(
      "SELECT video_id FROM webhook_events WHERE event = 'video.ready'",
    ))
      bump(e.video_id, 'webhooks');
    for (const b of boss ?? [])
      if (b.name === 'vidq-analysis' && b.state === 'completed' && json(b.output)?.ready === true)
        bump(b.video_id, 'boss');
    for (const [id, c] of completions) {
      const j = jobOf.get(id);
      if (j?.only) continue;
      if (c.webhooks > 1) v.push(`video ${id} was announced ready ${c.webhooks} times (video.ready webhook events)`);
      if (c.boss > 1)
        v.push(`video ${id} was analysed to completion ${c.boss} times (pg-boss jobs completed as ready)`);
    }
    if (boss)
      for (const j of jobs)
        if (j.state === 'done' && !(completions.get(j.video_id)?.boss ?? 0))
          v.push(`video ${j.video_id}: its job is done but no pg-boss analysis job completed as ready`);

    // People (issue 12).
    const one = async (q: string) => Number((await db.all<{ n: number }>(q))[0]?.n ?? 0);
    const crossed =
      await one(`SELECT count(*) AS n FROM person_appearances a JOIN people p ON p.id = a.person_id JOIN segments s ON s.id = a.segment_id JOIN videos v ON v.id = s.video_id
      WHERE s.kind != 'face' OR a.video_id != s.video_id OR a.index_id != v.index_id OR p.index_id != a.index_id OR p.user_id != v.user_id`);
    if (crossed) v.push(`${crossed} face appearances belong to a person of another index, video or user`);
    const empty = await one(
      'SELECT count(*) AS n FROM people p WHERE NOT EXISTS (SELECT 1 FROM person_appearances a WHERE a.person_id = p.id)',
    );
    if (empty) v.push(`${empty} people without any appearance`);
    const loose = await one(
      `SELECT count(*) AS n FROM segments s JOIN videos v ON v.id = s.video_id WHERE s.kind = 'face' AND v.status = 'ready' AND NOT EXISTS (SELECT 1 FROM person_appearances a WHERE a.segment_id = s.id)`,
    );
    if (loose) v.push(`${loose} face appearances of ready videos belong to no person`);

    // Signed upload URLs (issue 20): a video with a grant's key came through that grant, so the
    // grant is used, and the video belongs to the grant's user.
    const grants = await db.all<{ id: string; used_at: number | null; same_user: number }>(
      'SELECT g.id, g.used_at, CASE WHEN g.user_id = v.user_id THEN 1 ELSE 0 END AS same_user FROM upload_grants g JOIN videos v ON v.id = g.id',
    );
    for (const g of grants) {
      if (g.used_at === null) v.push(`video ${g.id} exists but its upload URL was never used`);
      if (!g.same_user) v.push(`video ${g.id} belongs to another user than its upload URL`);
    }

    // Credits: a limited balance is its ledger's sum, and never negative.
    const users = await db.all<Snapshot['users'][number]>(
      'SELECT u.id, u.credits, (SELECT sum(delta) FROM credit_events e WHERE e.user_id = u.id) AS ledger, (SELECT count(*) FROM credit_events e WHERE e.user_id = u.id) AS events FROM users u ORDER BY u.id',
    );
    for (const u of users) {
      if (u.credits === null) continue;
      if (u.credits < 0) v.push(`user ${u.id} has a negative balance ${u.credits}`);
      if (u.credits !== (u.ledger ?? 0))
        v.push(`user ${u.id}: balance ${u.credits} but credit_events sum to ${u.ledger ?? 0}`);
    }
    // PostgreSQL enforces its foreign keys on every write; SQLite is asked.
    if (db.dialect === 'sqlite') {
      const fk = await db.all('PRAGMA foreign_key_check');
      if (fk.length) v.push(`foreign key violations: ${JSON.stringify(fk).slice(0, 300)}`);
    }
    return { violations: v, snapshot: { videos, indexes, segments: segmentCount, users } };
  } finally {
    await db.close();
  }
}
