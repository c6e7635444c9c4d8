/** POST /remote-upload (JSON or server-sent events) and POST /remove-from-index. */
import { Elysia } from 'elysia';
import type { AuthorizedUpload, UploadEvent } from '../../ingest/service';
import type { Service } from '../../service';
import { authentication } from '../auth';
import {
  ErrorBody,
  RemoveBody,
  StatusComplete,
  UploadBody,
  UploadEvent as UploadEventSchema,
  UploadResponse,
} from '../models';

const errors = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  413: ErrorBody,
  415: ErrorBody,
  422: ErrorBody,
  429: ErrorBody,
  502: ErrorBody,
  504: ErrorBody,
  507: ErrorBody,
};

export function uploadRoutes(s: Service) {
  return new Elysia({ name: 'routes/upload' })
    .use(authentication(s.accounts))
    .post(
      '/remote-upload',
      async ({ body, request, user }): Promise<any> => {
        const webhook = body.webhook_url ? await s.webhooks.checkUrl(body.webhook_url) : null;
        const authorized = await s.ingest.authorize(user, body);
        const hook =
          webhook && authorized.createdIndex
            ? await s.webhooks.setIndexWebhook(user, authorized.index.id, webhook)
            : null;
        // Events by default, as the hosted API (its SDK sends no Accept and reads the stream).
        if (!wantsJson(request)) return uploadAsEvents(s, authorized, hook?.secret);
        // A client that left cancels its upload: it holds a download slot for nobody.
        const data = await s.ingest.fetchAndStore(authorized, undefined, request.signal);
        // The signing secret is shown once, where the webhook URL was first set (issue 25).
        return hook?.secret ? { data, webhook_secret: hook.secret } : { data };
      },
      {
        auth: true,
        body: UploadBody,
        response: { 200: UploadResponse, ...errors },
        detail: {
          operationId: 'remoteUpload',
          tags: ['ingest'],
          summary: 'Add a video to an index from a URL',
          description:
            'Fetches the file, probes it and stores it. By default (as the hosted API) the answer is a stream of server-sent events — `file_authorized`, `progress` while downloading, `metadata`, a last `progress` (100), then `complete`, or `error` — each `data:` a JSON object with a `type` (schema: `UploadEvent`); the stream closes when the file is stored. A client whose `Accept` names `application/json` gets `{data: UploadMetadata}` once the file is stored. Errors found before any byte is fetched are plain JSON errors either way.',
          responses: {
            200: {
              description:
                "the upload's events (the default), or with `Accept: application/json` the stored file's metadata",
              content: {
                'text/event-stream': {
                  schema: { type: 'string', description: 'server-sent events; each `data:` is a JSON `UploadEvent`' },
                  'x-event-data': UploadEventSchema,
                  example:
                    'event: file_authorized\ndata: {"type":"file_authorized","key":"…","index_id":"…","file_name":"clip.mp4"}\n\nevent: metadata\ndata: {"type":"metadata","fps":"25","duration":12.5,"fileSize":"1.00 MB","file_size_bytes":1048576,"key":"…","percentage":100}\n\nevent: progress\ndata: {"type":"progress","key":"…","stage":"stored","percentage":100,"bytes":1048576,"total_bytes":1048576}\n\nevent: complete\ndata: {"type":"complete","key":"…","index_id":"…","status":"processing","duplicate":false}\n\n',
                },
              },
            },
          } as never,
        },
      },
    )
    .post(
      '/remove-from-index',
      async ({ body, user }) => {
        await s.ingest.remove(user, body.project_id, body.video_id);
        return { status: 'complete' };
      },
      {
        auth: true,
        body: RemoveBody,
        response: { 200: StatusComplete, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
        detail: {
          operationId: 'removeFromIndex',
          tags: ['ingest'],
          summary: 'Remove a video from an index (file, derived data and rows)',
          description:
            '`project_id` is the index_id or the index name (the hosted SDK sends the name), `video_id` the file_id (upload `key`). Its analysis stops; the rows go first, then the files.',
        },
      },
    );
}

/**
 * True when the client asks for JSON rather than events: an Accept that names application/json
 * (or a +json type) and not text/event-stream. No Accept, or `*\/*`, gets the event stream.
 */
export function wantsJson(request: Request): boolean {
  const accept = (request.headers.get('accept') ?? '').toLowerCase();
  return !accept.includes('text/event-stream') && /application\/(?:[\w.-]+\+)?json/.test(accept);
}

/** Streams the upload's events; errors after the stream has started arrive as an `error` event. */
function uploadAsEvents(s: Service, authorized: AuthorizedUpload, webhookSecret?: string): Response {
  return uploadEventStream((send) => s.ingest.fetchAndStore(authorized, withSecret(send, webhookSecret)));
}

/** Adds the webhook signing secret (shown once) to the stream's `file_authorized` event. */
export function withSecret(send: (e: UploadEvent) => void, secret: string | undefined): (e: UploadEvent) => void {
  return secret ? (e) => send(e.type === 'file_authorized' ? { ...e, webhook_secret: secret } : e) : send;
}

/** The event stream of any upload (also POST /upload): `run` stores the file and emits its events. */
export function uploadEventStream(run: (send: (e: UploadEvent) => void) => Promise<unknown>): Response {
  const enc = new TextEncoder();
  let open = true;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (e: UploadEvent) => {
        if (!open) return;
        try {
          controller.enqueue(enc.encode(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`));
        } catch {
          open = false;
        }
      };
      run(send)
        .catch(() => {}) // already sent as an `error` event
        .finally(() => {
          if (open) controller.close();
          open = false;
        });
    },
    cancel() {
      // The client went away; the upload itself carries on.
      open = false;
    },
  });
  return new Response(stream, {
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    },
  });
}
