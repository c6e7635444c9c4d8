/**
 * The hosted API's own calls, as its official SDK sends and reads them (moonshine-sdk.md), on top
 * of the same services as the spec's endpoints:
 *   GET /check-token, POST /does-group-exist, GET /create-index   accounts and indexes
 *   POST /api-pre-upload, PUT /api-upload/{key}                    a local file by signed URL
 *   GET /status, GET /compress-status                               progress after an upload
 */
import { Elysia, t } from 'elysia';
import { splitProjectId } from '../../accounts/project';
import { badRequest } from '../../errors';
import type { Service } from '../../service';
import { authentication, originOf } from '../auth';
import {
  CompressStatusResponse,
  CreateIndexResponse,
  ErrorBody,
  ExistsResponse,
  FileStatusResponse,
  GroupExistsBody,
  PreUploadBody,
  PreUploadResponse,
  TokenValidity,
  UploadResponse,
} from '../models';

export function hostedRoutes(s: Service) {
  const grants = s.grants;
  return new Elysia({ name: 'routes/hosted' })
    .use(authentication(s.accounts))
    .get(
      '/check-token',
      async ({ query }) => {
        try {
          await s.accounts.authenticate(query.token);
          return { valid: true };
        } catch {
          return { valid: false };
        }
      },
      {
        query: t.Object({ token: t.String({ maxLength: 1000, description: 'the token to check' }) }),
        response: { 200: TokenValidity, 400: ErrorBody, 401: ErrorBody },
        detail: {
          operationId: 'checkToken',
          tags: ['accounts'],
          summary: 'Tell whether a token is valid (live and not revoked)',
          description:
            "The hosted SDK's first call. An unknown or revoked token is `{valid: false}` with status 200; only a missing `token` is an error (401).",
        },
      },
    )
    .post(
      '/does-group-exist',
      async ({ body, user }) => {
        if (body.index.trim() === '')
          throw badRequest('field "index" must not be empty: the name or index_id of an index');
        return { exists: (await s.indexes.find(user, body.index, { byName: true })) !== undefined };
      },
      {
        auth: true,
        body: GroupExistsBody,
        response: { 200: ExistsResponse, 400: ErrorBody, 401: ErrorBody },
        detail: {
          operationId: 'doesGroupExist',
          tags: ['indexes'],
          summary: 'Tell whether the token owner has a live index of that name (or index_id)',
          description:
            "Another user's index of the same name is not seen (`exists: false`); a deleted index does not exist until restored.",
        },
      },
    )
    .get(
      '/create-index',
      async ({ query, user }) => {
        const type = query.type === 'performance' ? 'performance' : 'standard';
        const { index, created } = await s.indexes.create(user, query.index, type);
        return {
          status: 'success',
          index_id: index.id,
          name: index.name,
          type: index.type,
          created,
        };
      },
      {
        auth: true,
        query: t.Object({
          token: t.Optional(
            t.String({ description: 'user authentication token (or an `Authorization: Bearer` header)' }),
          ),
          index: t.String({ maxLength: 200, description: 'name of the new index' }),
          type: t.Optional(
            t.Union([t.Literal('performance'), t.Literal('standard')], {
              description:
                '`performance`: an index that takes live frames (`/add-stream`, `/stream`); default `standard`',
            }),
          ),
        }),
        response: { 200: CreateIndexResponse, 400: ErrorBody, 401: ErrorBody, 409: ErrorBody },
        detail: {
          operationId: 'createIndex',
          tags: ['indexes'],
          summary: "Create an index (the hosted API's GET form; POST /remote-upload also creates one by name)",
          description:
            'An index of that name and type that exists already is answered as it is (`created: false`); one of the other type is 409. A plain index answers live calls with `{"error": "this index is not compatible with streaming"}`.',
        },
      },
    )
    .post(
      '/api-pre-upload',
      async ({ body, request }) => {
        const p = await splitProjectId(s.accounts, body.index);
        if (p.index === '') throw badRequest('field "index" is your token followed by the name of an index');
        const grant = await grants.issue(p.user, {
          index: p.index,
          filename: body.filename,
          filesize: body.filesize,
          tokenId: p.tokenId,
        });
        return { key: grant.key, url: originOf(request) + grant.path, expires_at: grant.expiresAt.toISOString() };
      },
      {
        body: PreUploadBody,
        response: {
          200: PreUploadResponse,
          400: ErrorBody,
          401: ErrorBody,
          413: ErrorBody,
          429: ErrorBody,
          507: ErrorBody,
        },
        detail: {
          operationId: 'preUpload',
          tags: ['ingest'],
          summary: "Get a signed URL to PUT a local video file to (the hosted SDK's local upload)",
          description:
            "`index` is your token followed by the index name (no separator). The answer's `url` takes one `PUT` of the raw file, of exactly `filesize` bytes, before `expires_at` (`--upload-url-ttl-sec`, default 1 h); `key` is the file_id the video will have. Size, quotas and the index name are checked here already; everything else as POST /upload when the file arrives.",
        },
      },
    )
    .put(
      '/api-upload/:key',
      async ({ params, query, request }): Promise<any> => {
        const declared = request.headers.get('content-length');
        if (declared === null || !/^\d+$/.test(declared.trim()))
          throw badRequest('send the file with a Content-Length header (the size given to POST /api-pre-upload)');
        const grant = await grants.take(params.key, query);
        const user = await s.accounts.getUser(grant.userId);
        if (!user) throw badRequest('the user of this upload URL no longer exists');
        if (Number(declared) !== grant.sizeBytes) {
          await grants.release(grant.id);
          throw badRequest(`the file is ${declared} bytes; this upload URL is for exactly ${grant.sizeBytes} bytes`);
        }
        let authorized: Awaited<ReturnType<typeof s.ingest.authorizeFile>>;
        try {
          authorized = await s.ingest.authorizeFile(user, {
            index: grant.indexRef,
            file_name: grant.fileName,
            declaredBytes: grant.sizeBytes,
            videoId: grant.id,
          });
        } catch (e) {
          // Refused before a byte was read (busy, quota, disk): the URL stays usable for a retry.
          await grants.release(grant.id);
          throw e;
        }
        const body = request.body;
        if (!body) throw badRequest('the request body is empty; send the video file as the body');
        const stored = await s.ingest.receiveAndStore(
          authorized,
          { kind: 'raw', stream: body, declaredBytes: grant.sizeBytes },
          undefined,
          request.signal,
        );
        return { data: stored };
      },
      {
        parse: 'none',
        params: t.Object({ key: t.String({ maxLength: 64, description: 'the `key` of POST /api-pre-upload' }) }),
        query: t.Object({
          expires: t.Optional(t.String({ description: 'part of the signed URL' })),
          token_id: t.Optional(t.String({ maxLength: 100, description: 'part of the signed URL' })),
          sig: t.Optional(t.String({ description: 'part of the signed URL' })),
        }),
        response: {
          200: UploadResponse,
          400: ErrorBody,
          403: ErrorBody,
          404: ErrorBody,
          410: ErrorBody,
          413: ErrorBody,
          415: ErrorBody,
          422: ErrorBody,
          429: ErrorBody,
          507: ErrorBody,
        },
        detail: {
          operationId: 'putSignedUpload',
          tags: ['ingest'],
          summary: 'Send the file to a signed upload URL of POST /api-pre-upload',
          description:
            'The raw file as the body, with its media type (or `application/octet-stream`) and a Content-Length equal to the `filesize` given. The same admission, quotas, checks and analysis as POST /upload. 403: not a URL this server signed; 410: expired, or used already (each URL works once; a refusal before the body is read — busy, quota, disk, wrong size — leaves it usable).',
          requestBody: {
            required: true,
            content: {
              'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
              'video/*': { schema: { type: 'string', format: 'binary' } },
            },
          },
        },
      },
    )
    .get('/status', async ({ query }) => s.ingest.stageProgress(query.file_id), {
      query: t.Object({ file_id: t.String({ maxLength: 200, description: 'the file_id (upload `key`)' }) }),
      response: { 200: FileStatusResponse, 400: ErrorBody, 404: ErrorBody, 422: ErrorBody },
      detail: {
        operationId: 'fileStatus',
        tags: ['ingest'],
        summary: "A video's progress as a list, one 0–100 value per stage (the hosted SDK averages it)",
        description:
          'No token: the SDK sends only the file_id (a 32-character random id that only its owner was shown), and the answer holds nothing but progress. `status` is `[transfer, analysis]`; both are 100 when the video is ready. A failed video is 422 with the reason; an unknown id 404.',
      },
    })
    .get('/compress-status', async ({ query }) => ({ status: await s.ingest.storedProgress(query.video) }), {
      query: t.Object({ video: t.String({ maxLength: 200, description: 'the file_id (without an extension)' }) }),
      response: { 200: CompressStatusResponse, 400: ErrorBody, 404: ErrorBody, 422: ErrorBody },
      detail: {
        operationId: 'compressStatus',
        tags: ['ingest'],
        summary: 'How far a large upload is from being stored (0–100)',
        description:
          'vidq does not recompress large files; this is 100 as soon as the file is stored, the transfer progress before. No token (as /status).',
      },
    });
}
