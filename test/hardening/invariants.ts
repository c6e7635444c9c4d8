/**
 * The one invariant checker of the hardening tests, run after every scenario on a data directory
 * (normally with the server stopped, or at least idle). It reads the database and the disk and
 * returns every violation as a sentence; a healthy data directory gives [].
 *
 *  - no resource stuck in a non-final state (queued/downloading/processing) once `settled`;
 *    a failed resource says why; a processing one has a live analysis job
 *  - no orphan on disk: every folder under media/ has a row, tmp/ is empty, no frames.partial of a
 *    finished video, no folder for a row that never stored a file
 *  - no row pointing at a missing file (source files, frame files)
 *  - no duplicate segments (same video, kind, start, end, text), no rows of vanished videos/indexes
 *  - people: every appearance is a face segment of a video of the person's own index; no person
 *    without appearances; no face segment of a ready video without its person
 *  - every limited balance equals the sum of its credit_events and is never negative
 *  - a video made through a signed upload URL used that URL, and belongs to its user
 */
import { Database } from 'bun:sqlite';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

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

export function checkInvariants(
  dataDir: string,
  opts: CheckOptions = {},
): { violations: string[]; snapshot: Snapshot } {
  const settled = opts.settled ?? true;
  const v: string[] = [];
  const db = new Database(join(dataDir, 'vidq.db'), { readonly: true });
  try {
    const videos = db
      .query('SELECT id, status, stage, error, storage_path, index_id FROM videos')
      .all() as Snapshot['videos'];
    const indexes = db.query('SELECT id, deleted_at FROM media_indexes').all() as Snapshot['indexes'];
    const jobs = db.query('SELECT video_id, state, stage FROM jobs').all() as {
      video_id: string;
      state: string;
      stage: string;
    }[];
    const jobOf = new Map(jobs.map((j) => [j.video_id, j]));
    const indexIds = new Set(indexes.map((i) => i.id));
    const byId = new Map(videos.map((x) => [x.id, x]));

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
      if (x.storage_path && !existsSync(join(dataDir, x.storage_path)))
        v.push(`${name} points at a missing file ${x.storage_path}`);
      const dir = join(dataDir, 'media', x.id);
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
    }

    // Disk: every media folder has a row; tmp/ is empty.
    const mediaDir = join(dataDir, 'media');
    for (const d of existsSync(mediaDir) ? readdirSync(mediaDir) : []) {
      if (!byId.has(d))
        v.push(
          `orphan folder media/${d} (${statSync(join(mediaDir, d)).isDirectory() ? readdirSync(join(mediaDir, d)).join(', ') : 'file'}) has no row`,
        );
    }
    const tmpDir = join(dataDir, 'tmp');
    const tmp = existsSync(tmpDir) ? readdirSync(tmpDir) : [];
    if (settled && tmp.length) v.push(`tmp/ is not empty: ${tmp.join(', ')}`);

    // Frames and segments.
    const frames = db.query('SELECT video_id, file FROM frames').all() as { video_id: string; file: string }[];
    for (const f of frames) {
      if (!byId.has(f.video_id)) v.push(`frame row of a missing video ${f.video_id}`);
      else if (!existsSync(join(mediaDir, f.video_id, 'frames', f.file)))
        v.push(`frame row ${f.video_id}/${f.file} points at a missing file`);
    }
    const dupes = db
      .query(
        'SELECT video_id, kind, start, "end", text, count(*) n FROM segments GROUP BY video_id, kind, start, "end", text HAVING n > 1',
      )
      .all() as any[];
    for (const d of dupes)
      v.push(
        `duplicate segment x${d.n}: ${d.video_id} ${d.kind} ${d.start}-${d.end} ${JSON.stringify(d.text).slice(0, 60)}`,
      );
    const strays = (
      db.query('SELECT count(*) n FROM segments WHERE video_id NOT IN (SELECT id FROM videos)').get() as { n: number }
    ).n;
    if (strays) v.push(`${strays} segments of missing videos`);
    const segmentCount = (db.query('SELECT count(*) n FROM segments').get() as { n: number }).n;
    // People (issue 12).
    const crossed = (
      db
        .query(`SELECT count(*) n FROM person_appearances a JOIN people p ON p.id = a.person_id JOIN segments s ON s.id = a.segment_id JOIN videos v ON v.id = s.video_id
      WHERE s.kind != 'face' OR a.video_id != s.video_id OR a.index_id != v.index_id OR p.index_id != a.index_id OR p.user_id != v.user_id`)
        .get() as { n: number }
    ).n;
    if (crossed) v.push(`${crossed} face appearances belong to a person of another index, video or user`);
    const empty = (
      db
        .query(
          'SELECT count(*) n FROM people p WHERE NOT EXISTS (SELECT 1 FROM person_appearances a WHERE a.person_id = p.id)',
        )
        .get() as { n: number }
    ).n;
    if (empty) v.push(`${empty} people without any appearance`);
    const loose = (
      db
        .query(
          `SELECT count(*) n FROM segments s JOIN videos v ON v.id = s.video_id WHERE s.kind = 'face' AND v.status = 'ready' AND NOT EXISTS (SELECT 1 FROM person_appearances a WHERE a.segment_id = s.id)`,
        )
        .get() as { n: number }
    ).n;
    if (loose) v.push(`${loose} face appearances of ready videos belong to no person`);

    // Signed upload URLs (issue 20): a video with a grant's key came through that grant, so the
    // grant is used, and the video belongs to the grant's user.
    const grants = db
      .query(
        'SELECT g.id, g.used_at, g.user_id = v.user_id AS same_user FROM upload_grants g JOIN videos v ON v.id = g.id',
      )
      .all() as { id: string; used_at: number | null; same_user: number }[];
    for (const g of grants) {
      if (g.used_at === null) v.push(`video ${g.id} exists but its upload URL was never used`);
      if (!g.same_user) v.push(`video ${g.id} belongs to another user than its upload URL`);
    }

    // Credits: a limited balance is its ledger's sum, and never negative.
    const users = db
      .query(
        'SELECT u.id, u.credits, (SELECT sum(delta) FROM credit_events e WHERE e.user_id = u.id) ledger, (SELECT count(*) FROM credit_events e WHERE e.user_id = u.id) events FROM users u',
      )
      .all() as Snapshot['users'];
    for (const u of users) {
      if (u.credits === null) continue;
      if (u.credits < 0) v.push(`user ${u.id} has a negative balance ${u.credits}`);
      if (u.credits !== (u.ledger ?? 0))
        v.push(`user ${u.id}: balance ${u.credits} but credit_events sum to ${u.ledger ?? 0}`);
    }
    const fk = db.query('PRAGMA foreign_key_check').all();
    if (fk.length) v.push(`foreign key violations: ${JSON.stringify(fk).slice(0, 300)}`);
    return { violations: v, snapshot: { videos, indexes, segments: segmentCount, users } };
  } finally {
    db.close();
  }
}
