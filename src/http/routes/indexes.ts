/** GET /indexes, GET /index-resources, DELETE /indexes/{id}, POST /indexes/{id}/restore. */
import { Elysia, t } from 'elysia';
import type { Config } from '../../config';
import { badRequest, forbidden, unauthorized } from '../../errors';
import type { IndexView } from '../../indexes/service';
import type { PlaceInLine } from '../../jobs/queue';
import type { MediaLinks } from '../../media/links';
import type { Service } from '../../service';
import type { Video } from '../../storage/rows';
import type { HttpOptions } from '../options';
import { authentication, originOf } from '../auth';
import { ErrorBody, IndexesQuery, IndexView as IndexViewSchema, Resource, ResourcesQuery, TokenBody } from '../models';

export function indexRoutes(s: Service, opts: HttpOptions) {
  const anonymousAllowed = opts.loopback && s.config.anonymousListingOnLoopback;
  return new Elysia({ name: 'routes/indexes' })
    .use(authentication(s.accounts))
    .get(
      '/indexes',
      async ({ query, user }) => {
        const includeDeleted = parseBool(query.include_deleted, 'include_deleted');
        if (user !== null) {
          if (query.user_id !== undefined && query.user_id !== user.id)
            throw forbidden('the token does not belong to user_id');
          return s.indexes.list(user.id, includeDeleted);
        }
        if (!anonymousAllowed) throw unauthorized('a token is required to list indexes (query parameter "token")');
        if (!query.user_id) throw badRequest('query parameter "user_id" is required (or give a token)');
        return s.indexes.list((await s.accounts.requireUser(query.user_id)).id, includeDeleted);
      },
      {
        maybeAuth: true,
        query: IndexesQuery,
        response: { 200: t.Array(IndexViewSchema), 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: {
          operationId: 'listIndexes',
          tags: ['indexes'],
          summary: "List a user's indexes",
          description:
            'Without a token this answers only while the server is bound to loopback (configurable). With a token, user_id is optional and must match it.',
        },
      },
    )
    .get(
      '/index-resources',
      async ({ query, request, user }) => {
        if (query.user_id !== undefined && query.user_id !== user.id)
          throw forbidden('the token does not belong to user_id');
        if (!query.index) throw badRequest('query parameter "index" is required: the index_id or the name of an index');
        const index = await s.indexes.resolve(user, query.index, { byName: true });
        const origin = originOf(request);
        const rows = await s.indexes.resources(user.id, index.id);
        // Places in line are read fresh (the cached rows do not change when other videos move).
        const line = rows.some((v) => v.status === 'processing')
          ? await s.queue.placesInLine(s.config.analysisWorkers, s.config.shortLaneSec)
          : undefined;
        const live = rows.some((v) => v.fileType === 'video/x-live') ? await s.live.viewsByVideo(index.id) : undefined;
        return rows.map((v) => {
          const view = resourceView(v, s.config, s.links, origin, line);
          const stream = live?.get(v.id);
          return stream ? { ...view, live: stream } : view;
        });
      },
      {
        auth: true,
        query: ResourcesQuery,
        response: { 200: t.Array(Resource), 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        detail: {
          operationId: 'listIndexResources',
          tags: ['indexes'],
          summary: 'List the media resources of an index',
          description: 'Served from an in-memory cache that every write to the index invalidates.',
        },
      },
    )
    .delete(
      '/indexes/:index_id',
      async ({ params, user }) => {
        return indexView(s, user.id, (await s.indexes.softDelete(user, params.index_id)).id);
      },
      {
        auth: true,
        params: t.Object({ index_id: t.String({ description: 'index_id of the index' }) }),
        query: t.Object({
          token: t.Optional(
            t.String({ description: 'user authentication token (or an `Authorization: Bearer` header)' }),
          ),
        }),
        response: { 200: IndexViewSchema, 401: ErrorBody, 404: ErrorBody },
        detail: {
          operationId: 'deleteIndex',
          tags: ['indexes'],
          summary: 'Delete an index (soft: restorable until purged after the retention)',
          description:
            'Hidden from listings unless `include_deleted=true`; its uploads, questions and files answer 404 until it is restored. Purged with its files after `--purge-after-days`.',
        },
      },
    )
    .post(
      '/indexes/:index_id/restore',
      async ({ params, user }) => {
        return indexView(s, user.id, (await s.indexes.restore(user, params.index_id)).id);
      },
      {
        auth: true,
        params: t.Object({ index_id: t.String({ description: 'index_id of the index' }) }),
        body: t.Optional(TokenBody),
        response: { 200: IndexViewSchema, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
        detail: {
          operationId: 'restoreIndex',
          tags: ['indexes'],
          summary: 'Restore a deleted index',
          description:
            'The body is optional: the token may come as `Authorization: Bearer` instead. Restoring a live index changes nothing; 400 when another live index has taken its name.',
        },
      },
    );
}

async function indexView(s: Service, userId: string, indexId: string): Promise<IndexView> {
  return (await s.indexes.list(userId, true)).find((i) => i.index_id === indexId)!;
}

function parseBool(v: string | undefined, name: string): boolean {
  if (v === undefined || v === 'false') return false;
  if (v === 'true') return true;
  throw badRequest(`query parameter "${name}" must be "true" or "false"`);
}

export function resourceView(
  v: Video,
  config: Config,
  links: MediaLinks,
  origin: string,
  line?: Map<string, PlaceInLine>,
) {
  const place = v.status === 'processing' ? line?.get(v.id) : undefined;
  return {
    file_name: v.fileName,
    file_id: v.id,
    status: v.status,
    upload_time: v.uploadedAt.toISOString(),
    file_type: v.fileType ?? '',
    is_large: (v.sizeBytes ?? 0) > config.largeFileBytes,
    metadata: {
      fps: v.fps ?? 0,
      ...(v.durationSec !== null && { duration: v.durationSec }),
      ...(v.width !== null && { width: v.width, height: v.height ?? 0 }),
      ...(v.videoCodec !== null && { video_codec: v.videoCodec }),
      ...(v.hasAudio !== null && { has_audio: v.hasAudio }),
      ...(v.sizeBytes !== null && { file_size: v.sizeBytes }),
      ...(v.sha256 !== null && v.storagePath !== null && { sha256: v.sha256 }),
      ...(v.analysis && { analysis: v.analysis }),
    },
    src: origin + links.sign(`/media/${v.id}`),
    ...(v.analysis?.playback !== undefined && { playback_src: origin + links.sign(`/media/${v.id}/playback`) }),
    progress: v.progress,
    ...(v.stage && { stage: v.stage }),
    ...(place && { queue_position: place.position, ...(place.etaSec !== null && { eta_sec: place.etaSec }) }),
    ...(v.error && { error: v.error }),
  };
}
