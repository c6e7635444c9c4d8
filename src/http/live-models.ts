/** Request and response schemas of the live endpoints (issue 21): streams, pushed frames, alerts. */
import { t } from 'elysia';
import { TOKEN_PLACEHOLDER } from './models';
import { named } from './openapi/schema';

const token = t.Optional(t.String({ description: 'user authentication token (or an `Authorization: Bearer` header)' }));

export const AddStreamBody = named(
  'AddStreamRequest',
  t.Object(
    {
      token,
      index: t.String({
        description: 'name (or index_id) of a `performance` index (GET /create-index?type=performance)',
      }),
      url: t.Optional(
        t.String({
          maxLength: 4096,
          description:
            'additive: a source to pull instead of pushed frames: rtsp://, rtmp://, or http(s):// of an HLS live playlist or an MJPEG stream. Credentials in it are kept but never shown, logged or answered. Private addresses are refused unless the server allows them.',
        }),
      ),
      name: t.Optional(t.String({ maxLength: 200, description: 'additive: display name of the stream' })),
      fps: t.Optional(t.Number({ description: 'additive: frames analysed per second (default --live-fps)' })),
      retention: t.Optional(
        t.Integer({
          description: 'additive: seconds of recording, frames and segments kept (default --live-retention-sec)',
        }),
      ),
    },
    { examples: [{ token: TOKEN_PLACEHOLDER, index: 'front-door', name: 'front door camera' }] },
  ),
);

export const AddStreamResponse = named(
  'AddStreamResponse',
  t.Union([
    t.Object({ status: t.Literal('success'), stream_id: t.String() }),
    t.Object({
      error: t.String({
        description:
          '`index does not exist` or `this index is not compatible with streaming` (with status 200, as the hosted API)',
      }),
    }),
  ]),
);

export const StreamFrameBody = named(
  'StreamFrameRequest',
  t.Object(
    {
      base64_image: t.String({ description: 'a PNG (or JPEG) frame encoded as base64' }),
      stream_id: t.String({ maxLength: 100 }),
      time: t.Optional(
        t.Number({
          description:
            'Unix time of the frame in seconds (frames may arrive out of order); at most 24 hours before the server clock and 5 minutes after it (else 400)',
        }),
      ),
      token: t.Optional(
        t.String({ description: 'additive: when given, the stream must be this token owner’s (else 404)' }),
      ),
    },
    {
      examples: [
        {
          base64_image:
            'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
          stream_id: '<stream_id from POST /add-stream>',
          time: 1767225600,
        },
      ],
    },
  ),
);

export const StreamFrameResponse = named(
  'StreamFrameResponse',
  t.Union([
    t.Object({ success: t.Literal(true) }),
    t.Object({
      success: t.Literal(false),
      action: t.Union([t.Literal('paused'), t.Literal('stopped')], {
        description: '`paused`: keep sending (frames are not kept); `stopped`: stop sending',
      }),
    }),
  ]),
);

export const StreamsQuery = t.Object({
  token,
  index: t.Optional(t.String({ description: 'only the streams of this index (name or index_id)' })),
});

export const StreamControlParams = t.Object({
  stream_id: t.String({ maxLength: 100 }),
  action: t.Union([t.Literal('pause'), t.Literal('resume'), t.Literal('stop')]),
});

export const AlertBody = named(
  'AlertRequest',
  t.Object(
    {
      token,
      index: t.String({ description: 'name or index_id of the index whose streams are watched' }),
      stream_id: t.Optional(t.String({ description: 'only this stream of the index' })),
      kind: t.Union([t.Literal('object'), t.Literal('text'), t.Literal('speech'), t.Literal('caption')], {
        description:
          '`object`: an object label (e.g. person, car, bottle) appears; `text`: on-screen text contains the words; `speech`: speech contains them; `caption`: the captioner’s description contains them',
      }),
      query: t.String({ maxLength: 300, description: 'the label, or the words to find' }),
      count: t.Optional(t.Integer({ description: 'object: at least this many at once (default 1)' })),
      colour: t.Optional(t.String({ maxLength: 40, description: 'object: of this colour' })),
      person: t.Optional(t.String({ maxLength: 200, description: 'object: this named person of the index' })),
      cooldown_sec: t.Optional(
        t.Integer({ description: 'a match within this many seconds of the last one is the same event (default 30)' }),
      ),
    },
    {
      examples: [
        { token: TOKEN_PLACEHOLDER, index: 'front-door', kind: 'object', query: 'person', count: 1, cooldown_sec: 60 },
      ],
    },
  ),
);

export const AlertView = named(
  'LiveAlert',
  t.Object({
    alert_id: t.String(),
    index_id: t.String(),
    stream_id: t.Nullable(t.String()),
    kind: t.String(),
    query: t.String(),
    count: t.Integer(),
    colour: t.Nullable(t.String()),
    person: t.Nullable(t.String()),
    cooldown_sec: t.Integer(),
    created_at: t.String({ format: 'date-time' }),
  }),
);

export const FiredAlertView = named(
  'FiredAlert',
  t.Object({
    event_id: t.Integer(),
    alert_id: t.String(),
    stream_id: t.String(),
    index_id: t.String(),
    file_id: t.String(),
    kind: t.String(),
    query: t.String(),
    time: t.Number({ description: 'stream seconds of the first match' }),
    at: t.String({ format: 'date-time', description: 'when it happened' }),
    evidence: t.String(),
    frame_url: t.Nullable(t.String({ description: 'signed link to the frame of the match' })),
  }),
);
