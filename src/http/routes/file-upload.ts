/**
 * POST /upload: a video file sent in the request itself, as the raw body or as the `file` part of
 * a multipart/form-data form. The body is never parsed by Elysia (`parse: 'none'`) nor limited by
 * --max-body-bytes (see body.ts): the ingest service streams it to disk under --max-upload-bytes,
 * through the same admission, probe and answers as /remote-upload.
 */
import { Elysia, t } from 'elysia';
import type { Config } from '../../config';
import { badRequest, payloadTooLarge, unsupportedMedia } from '../../errors';
import { FORM_OVERHEAD_BYTES, openForm, type FormFields, type UploadBody } from '../../ingest/receive';
import type { Service } from '../../service';
import { authentication } from '../auth';
import { ErrorBody, UploadResponse } from '../models';
import { uploadEventStream, withSecret } from './upload';

const errors = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  413: ErrorBody,
  415: ErrorBody,
  422: ErrorBody,
  507: ErrorBody,
};

export const FileUploadQuery = t.Object({
  token: t.Optional(
    t.String({
      description:
        'user authentication token (or an Authorization: Bearer header, preferred: query strings end up in logs)',
    }),
  ),
  index: t.Optional(
    t.String({
      description:
        'index_id of an index, or the name of one (a new name creates the index); or a form field "index" before the file part',
    }),
  ),
  file_name: t.Optional(
    t.String({
      maxLength: 1000,
      description: 'display name of a raw upload (a multipart part uses its own filename); never a path',
    }),
  ),
  webhook_url: t.Optional(
    t.String({
      maxLength: 2048,
      description: 'webhook URL of the index when this upload creates it (see PUT /indexes/{index_id}/webhook)',
    }),
  ),
});

export function fileUploadRoutes(s: Service) {
  return new Elysia({ name: 'routes/file-upload' }).use(authentication(s.accounts)).post(
    '/upload',
    // A token in the query or a header is checked (maybeAuth) before a byte of the body is read.
    async ({ query, request, user: earlyUser }): Promise<any> => {
      const body = await bodyOf(request, s.config);
      // A form's fields (the hosted API sends the token and index in the body) fill in what the query lacks.
      const fields: FormFields = body.kind === 'multipart' ? body.form.fields : {};
      try {
        const user = earlyUser ?? (await s.accounts.authenticate(fields.token));
        const webhookUrl = query.webhook_url ?? fields.webhook_url;
        const webhook = webhookUrl ? await s.webhooks.checkUrl(webhookUrl) : null;
        const authorized = await s.ingest.authorizeFile(user, {
          index: query.index ?? fields.index,
          file_name: query.file_name ?? fields.file_name,
          declaredBytes: body.kind === 'raw' ? body.declaredBytes : null,
        });
        const created =
          webhook && authorized.createdIndex
            ? await s.webhooks.setIndexWebhook(user, authorized.index.id, webhook)
            : null;
        const run = (send?: Parameters<typeof s.ingest.receiveAndStore>[2]) =>
          s.ingest.receiveAndStore(authorized, body, send && withSecret(send, created?.secret), request.signal);
        if ((request.headers.get('accept') ?? '').includes('text/event-stream')) return uploadEventStream(run);
        const data = await run();
        // The signing secret is shown once, where the webhook URL was first set (issue 25).
        return created?.secret ? { data, webhook_secret: created.secret } : { data };
      } catch (e) {
        if (body.kind === 'multipart') await body.form.abandon();
        throw e;
      }
    },
    {
      maybeAuth: true,
      parse: 'none',
      query: FileUploadQuery,
      response: { 200: UploadResponse, ...errors },
      detail: {
        operationId: 'uploadFile',
        tags: ['ingest'],
        summary: 'Add a video to an index from the request body (raw bytes or a multipart form)',
        description:
          "The file is the request body (`Content-Type` of the media, or `application/octet-stream`), or the part named `file` of a `multipart/form-data` form (`curl -F file=@clip.mp4`). Token, index and the raw upload's file name go in the query (or the token as a Bearer header), or, in a form, as the fields `token`, `index`, `file_name`, `webhook_url` before the `file` part (`curl -F token=… -F index=… -F file=@clip.mp4`). Streamed to disk, at most `--max-upload-bytes`; the same checks and answers as /remote-upload, and the same event stream with `Accept: text/event-stream` (`progress` stage `uploading` counts the bytes received). A body cut off before its end (or its closing boundary) leaves nothing behind.",
        requestBody: {
          required: true,
          content: {
            'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
            'video/*': { schema: { type: 'string', format: 'binary' } },
            'multipart/form-data': {
              schema: {
                type: 'object',
                required: ['file'],
                properties: {
                  token: { type: 'string' },
                  index: { type: 'string' },
                  file_name: { type: 'string' },
                  webhook_url: { type: 'string' },
                  file: { type: 'string', format: 'binary' },
                },
              },
            },
          },
        },
      },
    },
  );
}

/**
 * What the request carries, checked before the upload is admitted (nothing is written yet). A form
 * is opened here: parsed up to its `file` part, whose fields may carry the token and index.
 */
async function bodyOf(request: Request, config: Config): Promise<UploadBody> {
  const declared = request.headers.get('content-length');
  if (declared !== null && !/^\d+$/.test(declared.trim()))
    throw badRequest('the Content-Length header is not a number');
  const declaredBytes = declared === null ? null : Number(declared);
  if (!request.body || declaredBytes === 0)
    throw badRequest(
      'the request body is empty; send the video file as the body (or as the "file" part of a multipart/form-data form)',
    );
  const contentType = request.headers.get('content-type') ?? '';
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'multipart/form-data') {
    const maxBodyBytes = config.maxUploadBytes + FORM_OVERHEAD_BYTES;
    if (declaredBytes !== null && declaredBytes > maxBodyBytes)
      throw payloadTooLarge(
        `the form is ${declaredBytes} bytes; the upload limit is ${config.maxUploadBytes} bytes (--max-upload-bytes)`,
      );
    const form = await openForm(request.body, contentType, declaredBytes, {
      maxBodyBytes,
      idleMs: config.idleTimeoutMs,
      deadlineMs: config.downloadDeadlineMs,
    });
    return { kind: 'multipart', form, declaredBytes };
  }
  if (
    type === 'application/json' ||
    type.endsWith('+json') ||
    type === 'application/x-www-form-urlencoded' ||
    type.startsWith('text/')
  ) {
    throw unsupportedMedia(
      `POST /upload takes the video file itself (a video/* or application/octet-stream body, or a multipart/form-data form), not ${type}; to add a video by URL use POST /remote-upload`,
    );
  }
  return { kind: 'raw', stream: request.body, declaredBytes };
}
