/**
 * The PostgreSQL dialect of src/storage/schema.ts (issue 33): the same tables, columns and indexes
 * under the same names, so that one repository reads both. Where the engines differ:
 * - times are `timestamptz(3)` (drizzle hands out Date objects, as the SQLite `timestamp_ms` does);
 * - ids counted by the database are identity columns; byte counts and Unix milliseconds are bigint;
 * - JSON is `json`, not `jsonb`, which keeps the text as written (key order included);
 * - vectors and face descriptors are `bytea`;
 * - the label index of segments covers object rows only (a btree entry is limited to ~2.7 kB);
 * - full-text search: segments carry a generated `tsvector` (`text_search`, English stemming as
 *   FTS5's porter tokenizer) with a GIN index, where SQLite has the FTS5 table segments_fts.
 * A change to schema.ts needs its twin here and `npm run db:generate` (both dialects); `npm run
 * db:check` fails when the two disagree on a table or column.
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
  doublePrecision,
  index,
  integer,
  json,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import {
  ALERT_KINDS,
  INDEX_TYPES,
  JOB_STATES,
  LIVE_STATES,
  NODE_ROLES,
  SEGMENT_KINDS,
  VIDEO_STATUSES,
  WEBHOOK_STATES,
} from './schema';

/** Bytes in and out as a Buffer, as SQLite's blob in 'buffer' mode. */
const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });
/** A full-text document; only PostgreSQL writes it (a generated column). */
const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

const ms = (name: string) => timestamp(name, { withTimezone: true, precision: 3, mode: 'date' });
const serialId = (name: string) => bigint(name, { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity();
const bigNumber = (name: string) => bigint(name, { mode: 'number' });

export const users = pgTable('users', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  credits: bigNumber('credits'),
  createdAt: ms('created_at').notNull(),
});

export const tokens = pgTable(
  'tokens',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    hash: text('hash').notNull(),
    prefix: text('prefix').notNull(),
    createdAt: ms('created_at').notNull(),
    revokedAt: ms('revoked_at'),
  },
  (t) => [uniqueIndex('tokens_hash_uq').on(t.hash), index('tokens_user_idx').on(t.userId)],
);

export const creditEvents = pgTable(
  'credit_events',
  {
    id: serialId('id'),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    delta: bigNumber('delta').notNull(),
    reason: text('reason').notNull(),
    createdAt: ms('created_at').notNull(),
  },
  (t) => [index('credit_events_user_idx').on(t.userId)],
);

export const mediaIndexes = pgTable(
  'media_indexes',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    createdAt: ms('created_at').notNull(),
    deletedAt: ms('deleted_at'),
    type: text('type', { enum: INDEX_TYPES }).notNull().default('standard'),
  },
  (t) => [
    uniqueIndex('media_indexes_user_name_live_uq').on(t.userId, t.name).where(sql`deleted_at IS NULL`),
    index('media_indexes_user_idx').on(t.userId),
  ],
);

export const videos = pgTable(
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
    fileName: text('file_name').notNull(),
    fileType: text('file_type'),
    storagePath: text('storage_path'),
    sizeBytes: bigNumber('size_bytes'),
    sha256: text('sha256'),
    durationSec: doublePrecision('duration_sec'),
    fps: doublePrecision('fps'),
    width: integer('width'),
    height: integer('height'),
    videoCodec: text('video_codec'),
    hasAudio: boolean('has_audio'),
    status: text('status', { enum: VIDEO_STATUSES }).notNull(),
    stage: text('stage'),
    progress: doublePrecision('progress').notNull().default(0),
    error: text('error'),
    analysis: json('analysis').$type<Record<string, unknown>>(),
    uploadedAt: ms('uploaded_at').notNull(),
    updatedAt: ms('updated_at').notNull(),
  },
  (t) => [
    index('videos_index_idx').on(t.indexId),
    index('videos_index_sha_idx').on(t.indexId, t.sha256),
    index('videos_status_idx').on(t.status),
  ],
);

export const uploadGrants = pgTable(
  'upload_grants',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    indexRef: text('index_ref').notNull(),
    fileName: text('file_name').notNull(),
    sizeBytes: bigNumber('size_bytes').notNull(),
    expiresAt: ms('expires_at').notNull(),
    usedAt: ms('used_at'),
    createdAt: ms('created_at').notNull(),
  },
  (t) => [index('upload_grants_expires_idx').on(t.expiresAt)],
);

export const jobs = pgTable(
  'jobs',
  {
    videoId: text('video_id')
      .primaryKey()
      .references(() => videos.id, { onDelete: 'cascade' }),
    state: text('state', { enum: JOB_STATES }).notNull(),
    stage: text('stage').notNull(),
    progress: doublePrecision('progress').notNull().default(0),
    etaSec: doublePrecision('eta_sec'),
    attempts: integer('attempts').notNull().default(0),
    workerId: text('worker_id'),
    error: text('error'),
    only: json('only').$type<string[]>(),
    createdAt: ms('created_at').notNull(),
    updatedAt: ms('updated_at').notNull(),
  },
  (t) => [index('jobs_state_idx').on(t.state, t.createdAt)],
);

export const segments = pgTable(
  'segments',
  {
    id: serialId('id'),
    videoId: text('video_id')
      .notNull()
      .references(() => videos.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: SEGMENT_KINDS }).notNull(),
    start: doublePrecision('start').notNull(),
    end: doublePrecision('end').notNull(),
    text: text('text').notNull(),
    confidence: doublePrecision('confidence'),
    extra: json('extra').$type<Record<string, unknown>>(),
    embedding: bytea('embedding'),
    vectorId: bigNumber('vector_id'),
    /** PostgreSQL only: the words of `text` for full-text search (SQLite: the FTS5 table segments_fts). */
    textSearch: tsvector('text_search').generatedAlwaysAs(sql`to_tsvector('english', "text")`),
  },
  (t) => [
    // With the id (SQLite's index carries it as the rowid): the finder's reads by kind and time and
    // the id range of a scope are answered from the index alone (bench/cluster: p95 382 → 167 ms at 100 h).
    index('segments_video_kind_idx').on(t.videoId, t.kind, t.start, t.id),
    // Object labels only: a btree entry holds at most ~2.7 kB, and a transcript line can be longer.
    index('segments_video_kind_text_end_idx').on(t.videoId, t.kind, t.text, t.start, t.end).where(sql`kind = 'object'`),
    index('segments_vector_idx').on(t.vectorId),
    index('segments_legacy_embedding_idx').on(t.id).where(sql`${t.embedding} IS NOT NULL`),
    index('segments_text_search_idx').using('gin', t.textSearch),
  ],
);

export const segmentVectors = pgTable(
  'segment_vectors',
  {
    id: serialId('id'),
    videoId: text('video_id')
      .notNull()
      .references(() => videos.id, { onDelete: 'cascade' }),
    vector: bytea('vector').notNull(),
  },
  (t) => [index('segment_vectors_video_idx').on(t.videoId, t.id)],
);

export const frames = pgTable(
  'frames',
  {
    id: serialId('id'),
    videoId: text('video_id')
      .notNull()
      .references(() => videos.id, { onDelete: 'cascade' }),
    t: doublePrecision('t').notNull(),
    shot: integer('shot').notNull(),
    file: text('file').notNull(),
  },
  (t) => [index('frames_video_t_idx').on(t.videoId, t.t)],
);

export const webhookSecrets = pgTable('webhook_secrets', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  secret: text('secret').notNull(),
  createdAt: ms('created_at').notNull(),
});

export const indexWebhooks = pgTable('index_webhooks', {
  indexId: text('index_id')
    .primaryKey()
    .references(() => mediaIndexes.id, { onDelete: 'cascade' }),
  url: text('url').notNull(),
  updatedAt: ms('updated_at').notNull(),
});

export const webhookSettings = pgTable('webhook_settings', {
  id: integer('id').primaryKey(),
  defaultUrl: text('default_url'),
});

export const webhookEvents = pgTable(
  'webhook_events',
  {
    id: serialId('id'),
    userId: text('user_id').notNull(),
    indexId: text('index_id').notNull(),
    videoId: text('video_id').notNull(),
    event: text('event').notNull(),
    fileName: text('file_name').notNull(),
    status: text('status').notNull(),
    error: text('error'),
    url: text('url').notNull(),
    createdAt: ms('created_at').notNull(),
    state: text('state', { enum: WEBHOOK_STATES }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ms('next_attempt_at').notNull(),
    lastError: text('last_error'),
    deliveredAt: ms('delivered_at'),
    data: text('data'),
    /** When the event was handed to pg-boss (src/webhooks/pg-dispatch.ts); null while it waits. */
    queuedAt: ms('queued_at'),
  },
  (t) => [index('webhook_events_state_idx').on(t.state, t.videoId, t.id)],
);

export const people = pgTable(
  'people',
  {
    id: text('id').primaryKey(),
    indexId: text('index_id')
      .notNull()
      .references(() => mediaIndexes.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name'),
    createdAt: ms('created_at').notNull(),
  },
  (t) => [index('people_index_idx').on(t.indexId)],
);

export const personAppearances = pgTable(
  'person_appearances',
  {
    segmentId: bigNumber('segment_id')
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
    descriptor: bytea('descriptor').notNull(),
  },
  (t) => [
    index('person_appearances_person_idx').on(t.personId),
    index('person_appearances_index_idx').on(t.indexId),
    index('person_appearances_video_idx').on(t.videoId),
  ],
);

export const liveStreams = pgTable(
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
    url: text('url'),
    name: text('name').notNull(),
    fps: doublePrecision('fps').notNull(),
    retentionSec: integer('retention_sec').notNull(),
    state: text('state', { enum: LIVE_STATES }).notNull(),
    reason: text('reason'),
    originMs: bigNumber('origin_ms'),
    wentLiveAt: ms('went_live_at'),
    framesAnalysed: bigNumber('frames_analysed').notNull().default(0),
    secondsAnalysed: doublePrecision('seconds_analysed').notNull().default(0),
    framesDropped: bigNumber('frames_dropped').notNull().default(0),
    createdAt: ms('created_at').notNull(),
    updatedAt: ms('updated_at').notNull(),
  },
  (t) => [index('live_streams_user_idx').on(t.userId), uniqueIndex('live_streams_video_uq').on(t.videoId)],
);

export const liveAlerts = pgTable(
  'live_alerts',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    indexId: text('index_id')
      .notNull()
      .references(() => mediaIndexes.id, { onDelete: 'cascade' }),
    streamId: text('stream_id').references(() => liveStreams.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ALERT_KINDS }).notNull(),
    query: text('query').notNull(),
    minCount: integer('min_count').notNull().default(1),
    colour: text('colour'),
    person: text('person'),
    cooldownSec: integer('cooldown_sec').notNull(),
    createdAt: ms('created_at').notNull(),
  },
  (t) => [index('live_alerts_index_idx').on(t.indexId)],
);

export const liveAlertEvents = pgTable(
  'live_alert_events',
  {
    id: serialId('id'),
    alertId: text('alert_id')
      .notNull()
      .references(() => liveAlerts.id, { onDelete: 'cascade' }),
    streamId: text('stream_id')
      .notNull()
      .references(() => liveStreams.id, { onDelete: 'cascade' }),
    t: doublePrecision('t').notNull(),
    lastT: doublePrecision('last_t').notNull(),
    frame: text('frame'),
    evidence: text('evidence').notNull(),
    createdAt: ms('created_at').notNull(),
  },
  (t) => [uniqueIndex('live_alert_events_uq').on(t.alertId, t.streamId, t.t)],
);

export const nodes = pgTable(
  'nodes',
  {
    id: text('id').primaryKey(),
    host: text('host').notNull(),
    role: text('role', { enum: NODE_ROLES }).notNull(),
    version: text('version').notNull(),
    pid: integer('pid').notNull(),
    startedAt: ms('started_at').notNull(),
    lastSeen: ms('last_seen').notNull(),
    jobs: integer('jobs').notNull().default(0),
  },
  (t) => [index('nodes_last_seen_idx').on(t.lastSeen)],
);

export const leases = pgTable('leases', {
  name: text('name').primaryKey(),
  holder: text('holder').notNull(),
  takenAt: ms('taken_at').notNull(),
  expiresAt: ms('expires_at').notNull(),
});

export const catalogSettings = pgTable('catalog_settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
});
