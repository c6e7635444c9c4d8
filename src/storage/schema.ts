/**
 * Database schema (drizzle). Times are integer milliseconds since the epoch (mode 'timestamp_ms'),
 * durations are seconds, sizes are bytes. After changing this file, make the migration with a name that
 * says what it does (`npx drizzle-kit generate --name=what_it_adds && bun scripts/embed-migrations.ts`;
 * `npm run db:generate` does the same with a random name); `npm run db:check` tells whether one is missing.
 */
import { sql } from 'drizzle-orm';
import { blob, index, integer, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

export const users = sqliteTable('users', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** Remaining credits; NULL means unlimited (the default user). */
  credits: integer('credits'),
  createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
});

export const tokens = sqliteTable(
  'tokens',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** SHA-256 (hex) of the token; the token itself is never stored. */
    hash: text('hash').notNull(),
    /** First characters of the token, to tell tokens apart in listings. */
    prefix: text('prefix').notNull(),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    revokedAt: integer('revoked_at', { mode: 'timestamp_ms' }),
  },
  (t) => [uniqueIndex('tokens_hash_uq').on(t.hash), index('tokens_user_idx').on(t.userId)],
);

/** Every change of a balance, so a balance can be audited against its history. */
export const creditEvents = sqliteTable(
  'credit_events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    delta: integer('delta').notNull(),
    reason: text('reason').notNull(),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
  },
  (t) => [index('credit_events_user_idx').on(t.userId)],
);

export const INDEX_TYPES = ['standard', 'performance'] as const;
export type IndexType = (typeof INDEX_TYPES)[number];

export const mediaIndexes = sqliteTable(
  'media_indexes',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    /** Soft delete: set when deleted, cleared on restore; purged after the retention. */
    deletedAt: integer('deleted_at', { mode: 'timestamp_ms' }),
    /** `performance`: an index that takes live frames (the hosted API's `GET /create-index?type=performance`). */
    type: text('type', { enum: INDEX_TYPES }).notNull().default('standard'),
  },
  (t) => [
    // A name is unique among a user's active indexes; deleted ones keep theirs until restored.
    uniqueIndex('media_indexes_user_name_live_uq').on(t.userId, t.name).where(sql`deleted_at IS NULL`),
    index('media_indexes_user_idx').on(t.userId),
  ],
);

export const VIDEO_STATUSES = ['queued', 'downloading', 'processing', 'ready', 'failed'] as const;
export type VideoStatus = (typeof VIDEO_STATUSES)[number];

export const videos = sqliteTable(
  'videos',
  {
    id: text('id').primaryKey(),
    indexId: text('index_id')
      .notNull()
      .references(() => mediaIndexes.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    sourceUrl: text('source_url').notNull(),
    /** Display name from the URL or Content-Disposition; never used as a path. */
    fileName: text('file_name').notNull(),
    /** MIME type, e.g. video/mp4. */
    fileType: text('file_type'),
    /** Path of the stored file relative to the data directory (built from ids only). */
    storagePath: text('storage_path'),
    sizeBytes: integer('size_bytes'),
    sha256: text('sha256'),
    durationSec: real('duration_sec'),
    fps: real('fps'),
    width: integer('width'),
    height: integer('height'),
    videoCodec: text('video_codec'),
    hasAudio: integer('has_audio', { mode: 'boolean' }),
    status: text('status', { enum: VIDEO_STATUSES }).notNull(),
    /** Finer-grained stage name shown with progress (downloading, probing, ...). */
    stage: text('stage'),
    progress: real('progress').notNull().default(0),
    error: text('error'),
    /** What the analysis used and found: engine per analyzer, counts, timings (JSON). */
    analysis: text('analysis', { mode: 'json' }).$type<Record<string, unknown>>(),
    uploadedAt: integer('uploaded_at', { mode: 'timestamp_ms' }).notNull(),
    updatedAt: integer('updated_at', { mode: 'timestamp_ms' }).notNull(),
  },
  (t) => [
    index('videos_index_idx').on(t.indexId),
    index('videos_index_sha_idx').on(t.indexId, t.sha256),
    index('videos_status_idx').on(t.status),
  ],
);

/**
 * A signed upload URL handed out by `POST /api-pre-upload` (the hosted SDK's way to send a local
 * file): bound to its key (the future file_id), user, index and size; `usedAt` makes it single-use.
 */
export const uploadGrants = sqliteTable(
  'upload_grants',
  {
    /** The file_id the upload will have (the `key` of the answer). */
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The index name (or id) as the caller gave it; resolved (or created) when the file arrives. */
    indexRef: text('index_ref').notNull(),
    /** Display name of the file (never a path). */
    fileName: text('file_name').notNull(),
    /** The size the caller announced; the PUT must send exactly this many bytes. */
    sizeBytes: integer('size_bytes').notNull(),
    expiresAt: integer('expires_at', { mode: 'timestamp_ms' }).notNull(),
    /** Set when a PUT took the grant: a second PUT is refused. */
    usedAt: integer('used_at', { mode: 'timestamp_ms' }),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
  },
  (t) => [index('upload_grants_expires_idx').on(t.expiresAt)],
);
export type UploadGrant = typeof uploadGrants.$inferSelect;

export type User = typeof users.$inferSelect;
export type MediaIndex = typeof mediaIndexes.$inferSelect;
export type Video = typeof videos.$inferSelect;

/**
 * The analysis pipeline of a video: one row per video, advancing through `stage`s. Each stage's
 * output is committed with the move to the next stage, so a restart resumes where it stopped.
 */
export const JOB_STATES = ['pending', 'running', 'done', 'failed', 'cancelled'] as const;
export const jobs = sqliteTable(
  'jobs',
  {
    videoId: text('video_id')
      .primaryKey()
      .references(() => videos.id, { onDelete: 'cascade' }),
    state: text('state', { enum: JOB_STATES }).notNull(),
    /** Name of the stage to run next (or running), e.g. "analyzing:ocr". */
    stage: text('stage').notNull(),
    /** 0-100 over the whole pipeline. */
    progress: real('progress').notNull().default(0),
    /** Estimated seconds left. */
    etaSec: real('eta_sec'),
    attempts: integer('attempts').notNull().default(0),
    /** Process that holds the job (so a restart knows what was interrupted). */
    workerId: text('worker_id'),
    error: text('error'),
    /** A reanalysis: the only stages this run does (JSON list of stage names); null: the whole pipeline. */
    only: text('only', { mode: 'json' }).$type<string[]>(),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    updatedAt: integer('updated_at', { mode: 'timestamp_ms' }).notNull(),
  },
  (t) => [index('jobs_state_idx').on(t.state, t.createdAt)],
);

export const SEGMENT_KINDS = ['shot', 'ocr', 'object', 'speech', 'transcript', 'caption', 'audio', 'face'] as const;
export type SegmentKind = (typeof SEGMENT_KINDS)[number];

/** Everything a question can be about, with its time span. FTS5 (segments_fts) indexes `text`. */
export const segments = sqliteTable(
  'segments',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    videoId: text('video_id')
      .notNull()
      .references(() => videos.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: SEGMENT_KINDS }).notNull(),
    /** Seconds from the start of the video. */
    start: real('start').notNull(),
    end: real('end').notNull(),
    text: text('text').notNull(),
    confidence: real('confidence'),
    /** Kind-specific details (boxes, counts, labels, engine), JSON. */
    extra: text('extra', { mode: 'json' }).$type<Record<string, unknown>>(),
    /**
     * Legacy: the float32 embedding that rows carried before the compact vector store. The retrieval
     * core moves any it finds into `segment_vectors` at start-up and clears it; nothing writes it.
     */
    embedding: blob('embedding', { mode: 'buffer' }),
    /** The row of `segment_vectors` that holds this segment's sentence embedding (many segments share one). */
    vectorId: integer('vector_id'),
  },
  (t) => [
    index('segments_video_kind_idx').on(t.videoId, t.kind, t.start),
    // Object spans by label ("when is the dog visible?") without reading every object row of the
    // scope; with `end`, the seconds each label spans are summed from the index alone ("not found"
    // answers at 100 h: 90 → 22 ms).
    index('segments_video_kind_text_end_idx').on(t.videoId, t.kind, t.text, t.start, t.end),
    // Nearest vectors → their segments (the ANN index returns vector ids).
    index('segments_vector_idx').on(t.vectorId),
    // Finds the rows still holding a legacy float32 vector without reading the table.
    index('segments_legacy_embedding_idx').on(t.id).where(sql`${t.embedding} IS NOT NULL`),
  ],
);

/**
 * The compact vector store (issue 27): each distinct sentence embedding of a video once, as int8
 * (each component scaled by 127 / its largest magnitude; cosines need no scale), apart from the
 * segment rows so that both tables' pages are full. One store, read by search and answers alike.
 */
export const segmentVectors = sqliteTable(
  'segment_vectors',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    videoId: text('video_id')
      .notNull()
      .references(() => videos.id, { onDelete: 'cascade' }),
    /** int8 components, one byte each. */
    vector: blob('vector', { mode: 'buffer' }).notNull(),
  },
  (t) => [index('segment_vectors_video_idx').on(t.videoId, t.id)],
);

/** Sampled frames kept as small JPEGs (media/<video_id>/frames/<n>.jpg) for citations. */
export const frames = sqliteTable(
  'frames',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    videoId: text('video_id')
      .notNull()
      .references(() => videos.id, { onDelete: 'cascade' }),
    /** Seconds from the start. */
    t: real('t').notNull(),
    /** Index of the shot the frame belongs to. */
    shot: integer('shot').notNull(),
    /** File name inside the video's frames folder (generated, e.g. "000012.jpg"). */
    file: text('file').notNull(),
  },
  (t) => [index('frames_video_t_idx').on(t.videoId, t.t)],
);

export type Job = typeof jobs.$inferSelect;
/** A segment row; `vectorId` is read only where vectors matter (retrieval), so it may be absent. */
export type Segment = Omit<typeof segments.$inferSelect, 'vectorId'> & { vectorId?: number | null };
export type Frame = typeof frames.$inferSelect;

// --- webhooks (issue 14): per-user signing secrets, per-index URLs, and the delivery outbox

/** The secret a user's webhook deliveries are signed with (HMAC-SHA256); shown to the user once. */
export const webhookSecrets = sqliteTable('webhook_secrets', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  secret: text('secret').notNull(),
  createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
});

/** An index's own webhook URL (else the service's --webhook-url). */
export const indexWebhooks = sqliteTable('index_webhooks', {
  indexId: text('index_id')
    .primaryKey()
    .references(() => mediaIndexes.id, { onDelete: 'cascade' }),
  url: text('url').notNull(),
  updatedAt: integer('updated_at', { mode: 'timestamp_ms' }).notNull(),
});

/** One row (id 1): the running server's --webhook-url, which the outbox triggers read. */
export const webhookSettings = sqliteTable('webhook_settings', {
  id: integer('id').primaryKey(),
  defaultUrl: text('default_url'),
});

export const WEBHOOK_STATES = ['pending', 'delivered', 'failed'] as const;

/**
 * The outbox: one row per event, written by triggers in the same transaction as the change it
 * reports (see webhooks/outbox.ts), delivered in id order per video. No foreign keys: an event
 * outlives its video (video.removed) and its index (a purge).
 */
export const webhookEvents = sqliteTable(
  'webhook_events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: text('user_id').notNull(),
    indexId: text('index_id').notNull(),
    videoId: text('video_id').notNull(),
    /** video.ready | video.failed | video.removed */
    event: text('event').notNull(),
    fileName: text('file_name').notNull(),
    status: text('status').notNull(),
    error: text('error'),
    /** Where it goes: the index's URL when the event happened, else the server's --webhook-url. */
    url: text('url').notNull(),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    state: text('state', { enum: WEBHOOK_STATES }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: integer('next_attempt_at', { mode: 'timestamp_ms' }).notNull(),
    lastError: text('last_error'),
    deliveredAt: integer('delivered_at', { mode: 'timestamp_ms' }),
    /**
     * PostgreSQL only (always null on SQLite): when the event was handed to pg-boss as a delivery
     * job (src/webhooks/pg-dispatch.ts); null while it waits to be handed over.
     */
    queuedAt: integer('queued_at', { mode: 'timestamp_ms' }),
    /** What a live alert carries (alert.fired): the alert, stream, time, frame and evidence (JSON). */
    data: text('data'),
  },
  (t) => [index('webhook_events_state_idx').on(t.state, t.videoId, t.id)],
);
export type WebhookEvent = typeof webhookEvents.$inferSelect;
/** People of an index: face appearances grouped by likeness (src/people/). Never shared across indexes. */
export const people = sqliteTable(
  'people',
  {
    id: text('id').primaryKey(),
    indexId: text('index_id')
      .notNull()
      .references(() => mediaIndexes.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** Given by the user; NULL until named. */
    name: text('name'),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
  },
  (t) => [index('people_index_idx').on(t.indexId)],
);

/** Which person each `face` segment (one appearance) belongs to, and its face descriptor. */
export const personAppearances = sqliteTable(
  'person_appearances',
  {
    segmentId: integer('segment_id')
      .primaryKey()
      .references(() => segments.id, { onDelete: 'cascade' }),
    personId: text('person_id')
      .notNull()
      .references(() => people.id, { onDelete: 'cascade' }),
    videoId: text('video_id')
      .notNull()
      .references(() => videos.id, { onDelete: 'cascade' }),
    indexId: text('index_id')
      .notNull()
      .references(() => mediaIndexes.id, { onDelete: 'cascade' }),
    /** Unit-length Float32 FaceRes descriptor (mean over the appearance's frames). */
    descriptor: blob('descriptor', { mode: 'buffer' }).notNull(),
  },
  (t) => [
    index('person_appearances_person_idx').on(t.personId),
    index('person_appearances_index_idx').on(t.indexId),
    index('person_appearances_video_idx').on(t.videoId),
  ],
);

export type Person = typeof people.$inferSelect;

// --- live sources (issue 21): streams, their alerts and the alerts' events

/** `ended`: the source finished for good (a playlist with an end); `stopped`: stopped by its user. */
export const LIVE_STATES = ['connecting', 'live', 'reconnecting', 'paused', 'stopped', 'failed', 'ended'] as const;
export type LiveState = (typeof LIVE_STATES)[number];

/**
 * A live stream: frames pushed by a client (url null) or pulled from a camera or live playlist.
 * Its segments and frames belong to its own `videos` row (videoId), so search and answers see it
 * like any video; times are seconds since `originMs`.
 */
export const liveStreams = sqliteTable(
  'live_streams',
  {
    id: text('id').primaryKey(),
    videoId: text('video_id')
      .notNull()
      .references(() => videos.id, { onDelete: 'cascade' }),
    indexId: text('index_id')
      .notNull()
      .references(() => mediaIndexes.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** Pulled sources only; may hold credentials, so it is never shown, logged or answered (see redactUrl). */
    url: text('url'),
    name: text('name').notNull(),
    /** Frames analysed per second. */
    fps: real('fps').notNull(),
    /** Seconds of recording, frames and segments kept. */
    retentionSec: integer('retention_sec').notNull(),
    state: text('state', { enum: LIVE_STATES }).notNull(),
    reason: text('reason'),
    /** Unix time (ms) of stream time 0: the first frame's time. */
    originMs: integer('origin_ms'),
    wentLiveAt: integer('went_live_at', { mode: 'timestamp_ms' }),
    framesAnalysed: integer('frames_analysed').notNull().default(0),
    secondsAnalysed: real('seconds_analysed').notNull().default(0),
    framesDropped: integer('frames_dropped').notNull().default(0),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    updatedAt: integer('updated_at', { mode: 'timestamp_ms' }).notNull(),
  },
  (t) => [index('live_streams_user_idx').on(t.userId), uniqueIndex('live_streams_video_uq').on(t.videoId)],
);
export type LiveStream = typeof liveStreams.$inferSelect;

export const ALERT_KINDS = ['object', 'text', 'speech', 'caption'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

/** A standing question: a condition checked on every new window of the streams of an index (or one stream). */
export const liveAlerts = sqliteTable(
  'live_alerts',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    indexId: text('index_id')
      .notNull()
      .references(() => mediaIndexes.id, { onDelete: 'cascade' }),
    /** Only this stream; null: every stream of the index. */
    streamId: text('stream_id').references(() => liveStreams.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ALERT_KINDS }).notNull(),
    /** Object label / words the text, speech or caption must contain. */
    query: text('query').notNull(),
    minCount: integer('min_count').notNull().default(1),
    colour: text('colour'),
    /** A named person of the index (kind object, query "person"). */
    person: text('person'),
    /** Seconds without a match after which a new match is a new event. */
    cooldownSec: integer('cooldown_sec').notNull(),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
  },
  (t) => [index('live_alerts_index_idx').on(t.indexId)],
);
export type LiveAlert = typeof liveAlerts.$inferSelect;

/** One firing of an alert: an episode of matches (debounced), with its first frame and evidence. */
export const liveAlertEvents = sqliteTable(
  'live_alert_events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    alertId: text('alert_id')
      .notNull()
      .references(() => liveAlerts.id, { onDelete: 'cascade' }),
    streamId: text('stream_id')
      .notNull()
      .references(() => liveStreams.id, { onDelete: 'cascade' }),
    /** Stream seconds of the first and the latest match of the episode. */
    t: real('t').notNull(),
    lastT: real('last_t').notNull(),
    frame: text('frame'),
    evidence: text('evidence').notNull(),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
  },
  (t) => [uniqueIndex('live_alert_events_uq').on(t.alertId, t.streamId, t.t)],
);
export type LiveAlertEvent = typeof liveAlertEvents.$inferSelect;

export const NODE_ROLES = ['api', 'worker', 'all'] as const;
export type NodeRole = (typeof NODE_ROLES)[number];

/**
 * The processes of a cluster (issue 33): each `serve` and `vidq worker` registers itself here at
 * start and refreshes `last_seen` every few seconds (src/cluster/heartbeat.ts). A node unseen for
 * longer than the heartbeat's grace (about 15 s) counts as gone; a clean stop deletes its row.
 */
export const nodes = sqliteTable(
  'nodes',
  {
    /** Random, chosen at each start: a restarted process is a new node. */
    id: text('id').primaryKey(),
    host: text('host').notNull(),
    /** api: HTTP only (--analysis-workers 0); worker: analysis only (`vidq worker`); all: both. */
    role: text('role', { enum: NODE_ROLES }).notNull(),
    /** vidq's version (package.json). */
    version: text('version').notNull(),
    pid: integer('pid').notNull(),
    startedAt: integer('started_at', { mode: 'timestamp_ms' }).notNull(),
    lastSeen: integer('last_seen', { mode: 'timestamp_ms' }).notNull(),
    /** Analysis jobs running in this node at its last heartbeat. */
    jobs: integer('jobs').notNull().default(0),
  },
  (t) => [index('nodes_last_seen_idx').on(t.lastSeen)],
);
export type NodeRow = typeof nodes.$inferSelect;

/**
 * Named leases (issue 33): the node that holds one does the work it names, alone in the cluster,
 * until `expires_at` (a live stream's window loop, the maintenance cron). Taken and renewed by one
 * conditional upsert (repositories/leases.ts), so two nodes never both hold an unexpired lease.
 */
export const leases = sqliteTable('leases', {
  /** What the lease is for: `cron:maintenance`, `stream:<stream id>`. */
  name: text('name').primaryKey(),
  /** The holding node's id (nodes.id; no foreign key: a lease outlives its node until it expires). */
  holder: text('holder').notNull(),
  /** When the holder took it (kept while it renews). */
  takenAt: integer('taken_at', { mode: 'timestamp_ms' }).notNull(),
  expiresAt: integer('expires_at', { mode: 'timestamp_ms' }).notNull(),
});
export type LeaseRow = typeof leases.$inferSelect;

/**
 * Settings of the catalog itself (issue 33), one value per key: `catalog_id`, the id every node of
 * the catalog writes into a shared media folder (files.ts, claimMediaRoot), so that nodes with data
 * directories of their own agree on it.
 */
export const catalogSettings = sqliteTable('catalog_settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
});
