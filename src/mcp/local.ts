/**
 * The tools' backend inside the server (/mcp): the same services the HTTP routes call, as the
 * bearer token's user, so credits, isolation, quotas and upload admission are the API's own.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { badRequest } from '../errors';
import { resourceView } from '../http/routes/indexes';
import type { Service } from '../service';
import type { User } from '../storage/rows';
import type { AskRequest, Backend, UploadFailures } from './backend';

/** Frame links the server signs: /media/<file_id>/frames/<000012.jpg>. */
const FRAME_PATH = /^\/media\/([A-Za-z0-9_-]{1,64})\/frames\/(\d{6}\.jpg)$/;

export function localBackend(s: Service, user: User, origin: string, failures: UploadFailures): Backend {
  const absolute = (path: string | null) => path && origin + path;
  return {
    localFiles: false,
    async listIndexes() {
      return s.indexes.list(user.id, false);
    },
    async resolveIndex(ref) {
      const idx = await s.indexes.resolve(user, ref, { byName: true });
      return (await s.indexes.list(user.id, false)).find((i) => i.index_id === idx.id)!;
    },
    async resources(indexId) {
      const rows = await s.indexes.resources(user.id, indexId);
      const line = rows.some((v) => v.status === 'processing')
        ? await s.queue.placesInLine(s.config.analysisWorkers, s.config.shortLaneSec)
        : undefined;
      return rows.map((v) => resourceView(v, s.config, s.links, origin, line));
    },
    async search(req) {
      const page = await s.search.search(user, req);
      return { ...page, moments: page.moments.map((m) => ({ ...m, frame_url: absolute(m.frame_url) })) };
    },
    async ask(req: AskRequest, signal) {
      // `json` travels as /inquire's body carries it (the answering service reads it where it is built).
      const answer = await s.answering.inquire(user, req, signal);
      return { ...answer, evidence: answer.evidence.map((e) => ({ ...e, frame_url: absolute(e.frame_url) })) };
    },
    async transcript(fileId) {
      return s.exports.cues(user, fileId);
    },
    async people(indexId) {
      return (await s.people.list(user, indexId)).map(({ thumbnail, appearances, ...rest }) => ({
        ...rest,
        appearance_count: appearances,
        thumbnail_url: origin + s.links.sign(thumbnail),
      }));
    },
    async remove(indexId, fileId) {
      await s.ingest.remove(user, indexId, fileId);
    },
    async addUrl(index, url, subtitlesUrl) {
      const up = await s.ingest.authorize(user, { index, url, subtitles_url: subtitlesUrl });
      // The fetch goes on after the tool answered; a failure removes the row, so its reason is kept.
      s.ingest.fetchAndStore(up).catch((e: Error) => failures.record(up.videoId, user.id, e.message));
      return { file_id: up.videoId, index_id: up.index.id, file_name: up.fileName };
    },
    async addFile() {
      throw badRequest(
        'the server does not read files by path; give a url, or add local files with `vidq mcp` (stdio) or `vidq add`',
      );
    },
    uploadFailure(fileId) {
      return failures.get(fileId, user.id);
    },
    async frame(url) {
      // Only links this server signed, read from its own data directory.
      const u = new URL(url, origin);
      const m = FRAME_PATH.exec(u.pathname);
      if (!m) return null;
      if (
        s.links.verify(
          u.pathname,
          u.searchParams.get('expires') ?? undefined,
          u.searchParams.get('sig') ?? undefined,
        ) !== 'ok'
      )
        return null;
      try {
        return new Uint8Array(await readFile(join(s.files.videoDir(m[1]!), 'frames', m[2]!)));
      } catch {
        return null;
      }
    },
  };
}
