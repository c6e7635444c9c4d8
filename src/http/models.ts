/**
 * Request and response schemas: the single source of truth for validation and for /openapi.json.
 * Field names and types follow the spec exactly; fields marked "additive" are ours.
 */
import { t } from 'elysia';
import { named } from './openapi/schema';

/**
 * Placeholders of the request examples that Swagger UI's "Try it out" sends as they are: marked
 * with angle brackets so nobody mistakes them for values, and long enough for /inquire's minimums.
 */
export const TOKEN_PLACEHOLDER = '<your token: vidq token create, or DATA_DIR/default-token.txt; 60 characters>';
export const INDEX_PLACEHOLDER = '<index_id: 64 characters, from GET /indexes or GET /index-resources>';

export const ErrorBody = named(
  'Error',
  t.Object(
    {
      error: t.Integer({ format: 'int32', description: 'the HTTP status code of the response' }),
      message: t.String({ description: 'what went wrong: the field or the cause, and what to fix' }),
    },
    { description: 'The body of every error response' },
  ),
);

const tokenField = (required: boolean) => {
  const s = t.String({
    description:
      'user authentication token (60 characters, or 64 for tokens issued before; see docs/API.md, "Tokens"); may be left out when an `Authorization: Bearer` header is sent',
  });
  return required ? s : t.Optional(s);
};

export const UploadBody = named(
  'UploadRequest',
  t.Object(
    {
      token: tokenField(false),
      index: t.String({ description: 'index_id of an index, or the name of one (a new name creates the index)' }),
      url: t.String({ description: 'http(s) URL of the video file to fetch' }),
      webhook_url: t.Optional(
        t.String({
          maxLength: 2048,
          description:
            'additive: webhook URL of the index when this upload creates it (see PUT /indexes/{index_id}/webhook)',
        }),
      ),
      subtitles_url: t.Optional(
        t.String({
          description:
            "http(s) URL of a .vtt or .srt file with the video's subtitles (fetched under the same rules as `url`); its cues become transcript segments",
        }),
      ),
    },
    { examples: [{ token: TOKEN_PLACEHOLDER, index: 'demo', url: 'https://example.com/clip.mp4' }] },
  ),
);

export const UploadMetadata = named(
  'UploadMetadata',
  t.Object({
    type: t.String({ description: 'always "metadata"', examples: ['metadata'] }),
    fps: t.String({ description: 'frames per second of the video, as a string', examples: ['29.97'] }),
    duration: t.Number({ description: 'duration in seconds' }),
    fileSize: t.String({
      description:
        'size of the stored file the way the hosted product writes it: megabytes (2^20 bytes), two decimals, and " MB"',
      examples: ['12.34 MB'],
    }),
    file_size_bytes: t.Integer({ description: 'additive: the size of the stored file in bytes' }),
    key: t.String({ description: 'the file_id of the new (or identical existing) resource' }),
    percentage: t.Number({ description: 'upload progress, 100 when the file is stored' }),
  }),
);

export const UploadResponse = named(
  'UploadResponse',
  t.Object({
    data: UploadMetadata,
    webhook_secret: t.Optional(
      t.String({
        description:
          "the user's webhook signing secret, present only when this upload's `webhook_url` set the first webhook URL (shown once; see PUT /indexes/{index_id}/webhook)",
      }),
    ),
  }),
);

export const InquireBody = named(
  'InquireRequest',
  t.Object(
    {
      token: t.Optional(
        t.String({
          minLength: 60,
          description:
            'user authentication token; may be left out when an `Authorization: Bearer` header is sent (then a request with neither is 401)',
        }),
      ),
      index: t.Optional(
        t.String({
          description:
            'index_id or name of the media index; required unless `project_id` is sent (then leave out `token` too)',
        }),
      ),
      project_id: t.Optional(
        t.String({
          maxLength: 400,
          description:
            "the hosted API's form: your token followed by the index name (or index_id), no separator; replaces `token` and `index`",
        }),
      ),
      prompt: t.String({ minLength: 1, maxLength: 8000, description: 'main search/inquiry prompt' }),
      guidance: t.Optional(
        t.String({ default: '', maxLength: 8000, description: 'additional guidance for the analysis (length, focus)' }),
      ),
      target: t.Optional(
        t.Union(
          [
            t.String({
              maxLength: 64,
              description: 'a moment or range to focus on: seconds (75, 75.5), mm:ss, hh:mm:ss(.mmm), or a range a-b',
              examples: ['', '75', '1:15', '00:01:15.500', '1:00-1:30'],
            }),
            t.Number({ minimum: 0, maximum: 1e9, description: 'a moment in seconds (the hosted SDK sends a number)' }),
          ],
          { description: 'a moment or range to focus on: a string (75, 1:15, 1:00-1:30) or a number of seconds' },
        ),
      ),
      target_video: t.Optional(
        t.String({
          maxLength: 64,
          description: 'file_id of one video of the index to focus on (empty: the whole index)',
          examples: [''],
        }),
      ),
      subindex: t.Optional(
        t.Array(t.String({ maxLength: 64 }), {
          minItems: 1,
          maxItems: 100,
          description: 'file_ids of the videos of the index to consider (all of them must be in the index)',
        }),
      ),
      // Not a t.Union of string and object: Elysia would turn any value into an object to fit it.
      // The route checks the type (src/http/question.ts).
      json: t.Optional(
        t.Any({
          description:
            'asks for structured output: an object of field name → description of what to fill in, or the same object JSON-encoded (as the hosted SDK sends it)',
          examples: ['{"subject": "what the video shows"}'],
        }),
      ),
    },
    {
      examples: [
        {
          token: TOKEN_PLACEHOLDER,
          index: INDEX_PLACEHOLDER,
          prompt: 'What is written on screen?',
          guidance: '',
          target: '',
          target_video: '',
        },
      ],
    },
  ),
);

export const Evidence = named(
  'Evidence',
  t.Object({
    video_id: t.String(),
    file_name: t.String(),
    start: t.Number({ description: 'seconds' }),
    end: t.Number({ description: 'seconds' }),
    kind: t.String({ description: 'shot | ocr | object | speech | transcript | caption | audio' }),
    text: t.String(),
    score: t.Number(),
    frame_url: t.Union([t.String(), t.Null()], { description: 'signed URL of the sampled frame nearest the span' }),
  }),
);

export const InquireResponse = named(
  'InquireResponse',
  t.Object({
    status: t.String({ description: 'always "complete"', enum: ['complete'], examples: ['complete'] }),
    output: t.String({ description: 'the answer; every timestamp in it comes from `evidence`' }),
    evidence: t.Optional(t.Array(Evidence, { description: 'additive: what the answer is based on, best first' })),
    model: t.Optional(t.String({ description: 'additive: the backend that wrote the answer' })),
    credits_used: t.Optional(t.Number({ description: 'additive: credits charged for this answer' })),
  }),
);

export const RemoveBody = named(
  'RemoveRequest',
  t.Object(
    {
      token: tokenField(false),
      project_id: t.String({ description: 'index_id or name of the index the video is in' }),
      video_id: t.String({ description: 'file_id of the video to remove' }),
    },
    {
      examples: [
        {
          token: TOKEN_PLACEHOLDER,
          project_id: INDEX_PLACEHOLDER,
          video_id: '<file_id: 32 characters, from GET /index-resources>',
        },
      ],
    },
  ),
);

export const StatusComplete = named(
  'OperationResult',
  t.Object({ status: t.String({ description: 'always "complete"', enum: ['complete'], examples: ['complete'] }) }),
);

export const IndexView = named(
  'Index',
  t.Object({
    index_id: t.String({ description: 'opaque 64-character identifier' }),
    name: t.String(),
    count: t.Integer({ description: 'number of videos currently in the index' }),
    created: t.String({ format: 'date-time' }),
    total_duration: t.Number({ description: "sum of the videos' durations, in seconds" }),
    deleted: t.Boolean(),
  }),
);

export const IndexesQuery = t.Object({
  user_id: t.Optional(t.String({ description: "the user whose indexes to list (defaults to the token's user)" })),
  include_deleted: t.Optional(
    t.String({ description: '"true" to include deleted indexes; default "false"', enum: ['true', 'false'] }),
  ),
  token: t.Optional(t.String({ description: 'optional token; when given it must belong to user_id' })),
});

export const ResourcesQuery = t.Object({
  user_id: t.Optional(t.String({ description: "optional; must be the token's user" })),
  token: t.Optional(t.String({ description: 'user authentication token' })),
  index: t.String({ description: 'index_id or name of the index' }),
});

/** The live part of a stream's resource (issue 21); also GET /streams. */
export const LiveView = named(
  'LiveStream',
  t.Object({
    stream_id: t.String(),
    file_id: t.String({ description: 'the resource whose segments and frames the stream writes' }),
    index_id: t.String(),
    name: t.String(),
    source: t.String({
      description: "`push`, or the source URL's scheme and host (`rtsp://camera.lan/…`): no credentials, path or query",
    }),
    status: t.Union(
      [
        t.Literal('connecting'),
        t.Literal('live'),
        t.Literal('reconnecting'),
        t.Literal('paused'),
        t.Literal('stopped'),
        t.Literal('failed'),
        t.Literal('ended'),
      ],
      {
        description: '`ended`: the source finished for good (e.g. a playlist with #EXT-X-ENDLIST); nothing more comes',
      },
    ),
    reason: t.Optional(t.String({ description: 'why it is reconnecting, failed or ended' })),
    went_live_at: t.Optional(t.String({ format: 'date-time' })),
    fps: t.Number(),
    retention_sec: t.Integer(),
    frames_analysed: t.Integer(),
    seconds_analysed: t.Number(),
    frames_dropped: t.Integer({
      description: 'frames not analysed: over the rate, before the first frame, or while behind',
    }),
    latest_time: t.Optional(t.Number({ description: 'stream seconds of the newest analysed frame' })),
    created_at: t.String({ format: 'date-time' }),
  }),
);

export const Resource = named(
  'MediaResource',
  t.Object({
    file_name: t.String(),
    file_id: t.String(),
    status: t.String({
      description: 'queued | downloading | processing | ready | failed',
      enum: ['queued', 'downloading', 'processing', 'ready', 'failed'],
    }),
    upload_time: t.String({ format: 'date-time' }),
    file_type: t.String({ description: 'MIME type, e.g. video/mp4 (empty while downloading)' }),
    is_large: t.Boolean({ description: 'file larger than the configured threshold (default 500 MiB)' }),
    metadata: named(
      'MediaMetadata',
      t.Object(
        {
          fps: t.Number({ description: 'frames per second' }),
          duration: t.Optional(t.Number({ description: 'seconds' })),
          width: t.Optional(t.Integer()),
          height: t.Optional(t.Integer()),
          video_codec: t.Optional(t.String()),
          has_audio: t.Optional(t.Boolean()),
          file_size: t.Optional(t.Integer({ description: 'bytes' })),
          sha256: t.Optional(
            t.String({
              description: 'additive: SHA-256 of the stored file (hex), so clients can skip files the index has',
            }),
          ),
          analysis: t.Optional(
            t.Record(t.String(), t.Any(), {
              description: 'per analyzer: the engine used and what it found (counts, time taken)',
            }),
          ),
        },
        { additionalProperties: true },
      ),
    ),
    src: t.String({ description: 'URL of this service streaming the file (Range supported), signed and expiring' }),
    playback_src: t.Optional(
      t.String({
        description:
          'additive: like src, a copy every browser plays (H.264/AAC MP4), present when the original codec or container needs one',
      }),
    ),
    progress: t.Number({ description: 'additive: 0-100' }),
    stage: t.Optional(
      t.String({ description: 'additive: current processing stage ("queued" while waiting for an analysis worker)' }),
    ),
    queue_position: t.Optional(t.Integer({ description: 'additive: while queued, the place in line (1 = next)' })),
    eta_sec: t.Optional(
      t.Integer({
        description:
          'additive: while queued, estimated seconds until the analysis is done (from the speed of earlier analyses on this server)',
      }),
    ),
    error: t.Optional(t.String({ description: 'additive: why the resource failed' })),
    live: t.Optional(LiveView),
  }),
);

export const TokenBody = named(
  'TokenRequest',
  t.Object({ token: tokenField(false) }, { examples: [{ token: TOKEN_PLACEHOLDER }] }),
);

/*
 * Server-sent events (Accept: text/event-stream on /remote-upload, /inquire-stream): documented as
 * components that the streams' media types point at (`x-event-data`); each event's `data:` is one
 * of these objects. test/openapi.test.ts checks the events sent against them.
 */
const event = <T extends Record<string, import('elysia').TSchema>>(type: string, fields: T, description: string) =>
  t.Object({ type: t.Literal(type), ...fields }, { description });

export const UploadEvent = named(
  'UploadEvent',
  t.Union(
    [
      event(
        'file_authorized',
        {
          key: t.String(),
          index_id: t.String(),
          file_name: t.String(),
          webhook_secret: t.Optional(
            t.String({
              description:
                "the user's webhook signing secret, when this upload's `webhook_url` set the first URL (shown once)",
            }),
          ),
        },
        'the upload was accepted; `key` is the new resource',
      ),
      event(
        'progress',
        {
          key: t.String(),
          stage: t.String(),
          percentage: t.Number(),
          bytes: t.Integer(),
          total_bytes: t.Union([t.Integer(), t.Null()]),
        },
        'download progress (at most 4 a second)',
      ),
      UploadMetadata, // `type: "metadata"`: the file is stored (the JSON answer's `data`)
      event(
        'complete',
        { key: t.String(), index_id: t.String(), status: t.String(), duplicate: t.Boolean() },
        'the last event of a successful upload',
      ),
      event(
        'error',
        { error: t.Integer({ description: 'the HTTP status the JSON answer would have had' }), message: t.String() },
        'the upload failed after the stream started',
      ),
    ],
    { description: 'One `data:` of the /remote-upload event stream; `type` says which' },
  ),
);

export const InquireStreamEvent = named(
  'InquireStreamEvent',
  t.Union(
    [
      event('evidence', { evidence: t.Array(Evidence) }, 'first: the evidence list, as in /inquire'),
      event('token', { text: t.String() }, 'the next chunk of the answer'),
      event(
        'chunk',
        { chunk: t.String() },
        "the hosted API's form of the same chunk: sent after each `token`, with the same text",
      ),
      event('reset', { reason: t.String() }, 'discard the tokens so far; the composed answer follows'),
      event(
        'complete',
        { status: t.Literal('complete'), output: t.String(), model: t.String(), credits_used: t.Number() },
        'last: the whole answer',
      ),
      event(
        'error',
        { error: t.Integer(), message: t.String() },
        'answering failed after the stream started (refunded)',
      ),
    ],
    { description: 'One `data:` of the /inquire-stream event stream; `type` says which' },
  ),
);

/* --- The hosted API's own calls (routes/hosted.ts; moonshine-sdk.md) --- */

export const TokenValidity = named(
  'TokenValidity',
  t.Object({ valid: t.Boolean({ description: 'true when the token is live (known and not revoked)' }) }),
);

export const GroupExistsBody = named(
  'GroupExistsRequest',
  t.Object(
    {
      token: tokenField(false),
      index: t.String({ maxLength: 200, description: 'name (or index_id) of the index' }),
    },
    { examples: [{ token: TOKEN_PLACEHOLDER, index: 'demo' }] },
  ),
);

export const ExistsResponse = named(
  'GroupExists',
  t.Object({ exists: t.Boolean({ description: 'the token owner has a live index of that name or id' }) }),
);

export const CreateIndexResponse = named(
  'CreatedIndex',
  t.Object({
    status: t.String({ description: 'always "success"', enum: ['success'], examples: ['success'] }),
    index_id: t.String(),
    name: t.String(),
    type: t.String({ description: 'standard | performance (takes live frames)', enum: ['standard', 'performance'] }),
    created: t.Boolean({ description: 'false when an index of that name and type existed already' }),
  }),
);

const numberOrText = (description: string) =>
  t.Optional(t.Union([t.Number(), t.String({ maxLength: 100 }), t.Null()], { description }));

export const PreUploadBody = named(
  'PreUploadRequest',
  t.Object(
    {
      index: t.String({
        maxLength: 400,
        description: "your token followed by the index name, no separator (the hosted API's project id)",
      }),
      filename: t.String({ maxLength: 1000, description: 'name of the file (shown in listings; never a path)' }),
      filesize: t.Union([t.Integer({ minimum: 1 }), t.String({ maxLength: 20 })], {
        description: 'size of the file in bytes; the PUT must send exactly this many',
      }),
      duration: numberOrText('duration the client measured (informational: the server probes the file)'),
      fps: numberOrText('frame rate the client measured (informational)'),
      content: t.Optional(
        t.Union([t.String({ maxLength: 200 }), t.Null()], { description: 'media type (informational)' }),
      ),
    },
    {
      examples: [
        {
          index: `${TOKEN_PLACEHOLDER}demo`,
          filename: 'clip.mp4',
          filesize: 1048576,
          duration: 12.5,
          fps: 25,
          content: 'video/mp4',
        },
      ],
    },
  ),
);

export const PreUploadResponse = named(
  'PreUpload',
  t.Object({
    key: t.String({ description: 'the file_id the video will have' }),
    url: t.String({ description: 'signed URL to PUT the raw file to, once, before `expires_at`' }),
    expires_at: t.String({ format: 'date-time', description: 'additive: when the URL stops working' }),
  }),
);

export const FileStatusResponse = named(
  'FileStatus',
  t.Object({
    status: t.Array(t.Integer({ minimum: 0, maximum: 100 }), {
      description: 'progress 0–100 per stage, [transfer, analysis]; the video is ready when all are 100',
    }),
    stages: t.Array(t.Object({ name: t.String(), progress: t.Integer() }), {
      description: 'additive: the same values with their stage names',
    }),
    state: t.String({ description: 'additive: the resource status (downloading, processing, ready)' }),
  }),
);

export const CompressStatusResponse = named(
  'CompressStatus',
  t.Object({ status: t.Integer({ minimum: 0, maximum: 100, description: '100 once the file is stored' }) }),
);
