/**
 * Live sources (issue 21): POST /add-stream, POST /stream (the hosted API's shapes), stream
 * listing and control, standing questions (alerts) and their server-sent events.
 */
import { Elysia, t } from 'elysia';
import type { FiredAlert } from '../../live/alerts';
import type { Service } from '../../service';
import { authentication, originOf } from '../auth';
import {
  AddStreamBody,
  AddStreamResponse,
  AlertBody,
  AlertView,
  FiredAlertView,
  StreamControlParams,
  StreamFrameBody,
  StreamFrameResponse,
  StreamsQuery,
} from '../live-models';
import { ErrorBody, LiveView } from '../models';

const tokenQuery = t.Object({
  token: t.Optional(t.String({ description: 'user authentication token (or an `Authorization: Bearer` header)' })),
});

export function liveRoutes(s: Service) {
  /** A fired alert as the API shows it: the frame as a signed absolute link. */
  const shown = (a: FiredAlert, origin: string) => {
    const { frame_path, ...rest } = a;
    return { ...rest, frame_url: frame_path ? origin + s.links.sign(frame_path) : null };
  };
  return new Elysia({ name: 'routes/live' })
    .use(authentication(s.accounts))
    .post(
      '/add-stream',
      async ({ body, user }) => {
        return s.live.addStream(user, body);
      },
      {
        auth: true,
        body: AddStreamBody,
        response: { 200: AddStreamResponse, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 429: ErrorBody },
        detail: {
          operationId: 'addStream',
          tags: ['live'],
          summary: 'Add a live stream to a performance index: pushed frames, or a camera / live playlist URL',
          description:
            'Answers `{status: "success", stream_id}`. As the hosted API, an unknown index or one that is not a `performance` index is answered with status 200 and `{error}`. Without `url`, frames are sent with POST /stream; with `url` (RTSP, RTMP, HLS, MJPEG) the server pulls them, records short segments for citations and reconnects with backoff. The stream appears in /index-resources with `live` (status, went-live time, frames and seconds analysed, frames dropped). Per-user caps: --live-max-streams-per-user, --live-max-fps-per-user, --live-max-kept-streams-per-user (stopped streams included, until their resources are removed) (429). The default name and the shown source are the URL’s scheme and host only (its path may hold a stream key).',
        },
      },
    )
    .post('/stream', async ({ body, user }) => s.live.pushFrame(user, body), {
      maybeAuth: true,
      body: StreamFrameBody,
      response: { 200: StreamFrameResponse, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody },
      detail: {
        operationId: 'streamFrame',
        tags: ['live'],
        summary: 'Send one frame of a pushed stream (about once a second; out of order is fine)',
        description:
          'The stream id is the credential (the hosted SDK sends no token); a `token`, when sent, must be the stream owner’s. Frames are placed by `time` (the first frame is stream time 0), analysed in windows within seconds, and become searchable segments of the stream’s resource. A frame beyond the stream’s fps is dropped (counted). `{success: false, action: "paused"}` while paused, `"stopped"` once stopped.',
      },
    })
    .get(
      '/streams',
      async ({ query, user }) => {
        const index = query.index ? await s.indexes.resolve(user, query.index, { byName: true }) : undefined;
        return s.live.list(user, index?.id);
      },
      {
        auth: true,
        query: StreamsQuery,
        response: { 200: t.Array(LiveView), 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
        detail: { operationId: 'listStreams', tags: ['live'], summary: "The user's live streams" },
      },
    )
    .post(
      '/streams/:stream_id/:action',
      ({ params, user }) => {
        return s.live.control(user, params.stream_id, params.action);
      },
      {
        auth: true,
        params: StreamControlParams,
        query: tokenQuery,
        response: { 200: LiveView, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody },
        detail: {
          operationId: 'controlStream',
          tags: ['live'],
          summary: 'Pause, resume or stop a live stream',
          description:
            'Paused: frames are not kept (pushed frames are answered `paused`; a pulled source disconnects). Stopped: final; what was analysed stays searchable until the retention purges it.',
        },
      },
    )
    .post('/alerts', ({ body, user }) => s.live.createAlert(user, body), {
      auth: true,
      body: AlertBody,
      response: { 200: AlertView, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
      detail: {
        operationId: 'createAlert',
        tags: ['live'],
        summary: 'Register a standing question on the live streams of an index',
        description:
          'Checked on every analysed window. A match fires once per episode (debounced by `cooldown_sec`): it is delivered through the signed webhook outbox (`type: "alert.fired"`, with `alert`: stream, time, frame path, evidence) when the index or the server has a webhook URL, and on GET /alerts/events.',
      },
    })
    .get(
      '/alerts',
      async ({ query, user }) => {
        const index = query.index ? await s.indexes.resolve(user, query.index, { byName: true }) : undefined;
        return s.live.listAlerts(user, index?.id);
      },
      {
        auth: true,
        query: StreamsQuery,
        response: { 200: t.Array(AlertView), 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
        detail: { operationId: 'listAlerts', tags: ['live'], summary: "The user's standing questions" },
      },
    )
    .delete(
      '/alerts/:alert_id',
      async ({ params, user }) => {
        await s.live.deleteAlert(user, params.alert_id);
        return { status: 'success' as const };
      },
      {
        auth: true,
        params: t.Object({ alert_id: t.String({ maxLength: 100 }) }),
        query: tokenQuery,
        response: { 200: t.Object({ status: t.Literal('success') }), 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
        detail: { operationId: 'deleteAlert', tags: ['live'], summary: 'Remove a standing question' },
      },
    )
    .get(
      '/alerts/fired',
      async ({ query, request, user }) => {
        const origin = originOf(request);
        return (await s.live.firedAlerts(user, query.alert_id)).map((a) => shown(a, origin));
      },
      {
        auth: true,
        query: t.Object({
          token: t.Optional(t.String()),
          alert_id: t.Optional(t.String({ maxLength: 100, description: 'only the events of this alert' })),
        }),
        response: { 200: t.Array(FiredAlertView), 400: ErrorBody, 401: ErrorBody },
        detail: { operationId: 'listFiredAlerts', tags: ['live'], summary: 'Alerts that fired, newest first' },
      },
    )
    .get(
      '/alerts/events',
      ({ request, user }) => {
        const origin = originOf(request);
        const enc = new TextEncoder();
        let unsubscribe = () => {};
        let ping: ReturnType<typeof setInterval> | null = null;
        const stream = new ReadableStream<Uint8Array>({
          start(ctrl) {
            ctrl.enqueue(enc.encode(': live alerts\n\n'));
            unsubscribe = s.live.hub.subscribe(user.id, (a) =>
              ctrl.enqueue(enc.encode(`event: alert\ndata: ${JSON.stringify(shown(a, origin))}\n\n`)),
            );
            ping = setInterval(() => {
              try {
                ctrl.enqueue(enc.encode(': ping\n\n'));
              } catch {
                /* closed */
              }
            }, 15_000);
          },
          cancel() {
            unsubscribe();
            if (ping) clearInterval(ping);
          },
        });
        request.signal.addEventListener('abort', () => {
          unsubscribe();
          if (ping) clearInterval(ping);
        });
        return new Response(stream, {
          headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
        });
      },
      {
        auth: true,
        query: tokenQuery,
        detail: {
          operationId: 'alertEvents',
          tags: ['live'],
          summary: 'Fired alerts as server-sent events, as they happen',
          description: 'Each event is `event: alert` with a `FiredAlert` JSON object as `data`.',
          responses: {
            200: {
              description: 'a stream of server-sent events',
              content: { 'text/event-stream': { schema: { type: 'string' } } },
            },
            400: { description: 'invalid query', content: { 'application/json': { schema: ErrorBody } } },
            401: { description: 'missing or invalid token', content: { 'application/json': { schema: ErrorBody } } },
          } as never,
        },
      },
    );
}
