/**
 * Adding videos to an index from a URL, and removing them.
 *
 * Order of writes, so that a crash at any point leaves nothing half-done:
 *  upload: row (downloading) → download into tmp/ → probe → rename into media/<id>/ → row stored
 *          (ready, or processing with its analysis job, in one commit). A crash before that commit
 *          leaves a .part file or a renamed file (both deleted at start-up) and a row that the
 *          start-up recovery marks failed with the reason.
 *  remove: rows first (one transaction) → files. A crash in between leaves a folder with no row,
 *          which the start-up sweep deletes.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Config } from '../config';
import {
  ApiError,
  badRequest,
  insufficientStorage,
  notFound,
  payloadTooLarge,
  tooManyRequests,
  unprocessable,
} from '../errors';
import { newVideoId } from '../ids';
import type { IndexService } from '../indexes/service';
import type { Logger } from '../log';
import { probeFile, type MediaInfo } from '../media/probe';
import type { DataDir } from '../storage/files';
import {
  deleteIndexIfEmpty,
  deleteVideoRow,
  deleteVideoRows,
  existingVideoIds,
  failInterruptedTransfers,
  insertVideo,
  lockUserQuota,
  markVideoStored,
  setTransferProgress,
  storedBytesExcept,
  twinInIndex,
  userUsage,
  videoById,
  videoInIndex,
} from '../storage/repositories/uploads';
import type { MediaIndex, User, Video } from '../storage/rows';
import type { Catalog } from '../storage/catalog';
import { cleanFileName, downloadToFile, fileNameOf } from './download';
import { receiveToFile, type UploadBody } from './receive';
import { fetchSubtitles, parseSubtitlesUrl, type SubtitlesSource } from './subtitles-url';
import { checkHost, parseSourceUrl } from './url-guard';
import type { VideoPlace } from '../videos/changes';

/** The spec's upload metadata (response `data`, and the SSE `metadata` event). */
export interface UploadMetadata {
  type: 'metadata';
  fps: string;
  duration: number;
  /** The hosted product's form: megabytes and a three-character unit, "12.34 MB" (see formatFileSize). */
  fileSize: string;
  /** Additive: the exact size in bytes. */
  file_size_bytes: number;
  key: string;
  percentage: number;
}

/** Server-sent events of an upload; each is sent as `data: <json>`. */
export type UploadEvent =
  | {
      type: 'file_authorized';
      key: string;
      index_id: string;
      file_name: string;
      /** The webhook signing secret, when this upload's `webhook_url` set the user's first URL (shown once). */
      webhook_secret?: string;
    }
  | { type: 'progress'; key: string; stage: string; percentage: number; bytes: number; total_bytes: number | null }
  | UploadMetadata
  | { type: 'complete'; key: string; index_id: string; status: string; duplicate: boolean }
  | { type: 'error'; error: number; message: string };

export interface UploadRequest {
  index?: unknown;
  url?: unknown;
  /** A .vtt or .srt file to store with the video (read as its subtitles). */
  subtitles_url?: unknown;
}

/** POST /upload's admission: the index and a display name; the bytes come with the request. */
export interface FileUploadRequest {
  index?: unknown;
  file_name?: unknown;
  /** The body's declared size (Content-Length), null when chunked or unknown (multipart). */
  declaredBytes: number | null;
  /** The file_id to give the upload (a signed upload URL's key); default: a new one. */
  videoId?: string;
}

/** What the receiving step hands back to the common store path. */
interface Received {
  bytes: number;
  sha256: string;
  fileName: string;
}

/** Hooks the common store path gives its receiving step (a download or a request body). */
interface ReceiveHooks {
  signal: AbortSignal;
  /** The size the source declared, before its bytes: refused when it would leave too little disk or quota. */
  onDeclared(bytes: number | null): void;
  onProgress(received: number, total: number | null): void;
}

export interface AuthorizedUpload {
  user: User;
  /** The source of a URL upload; null for a file sent in the request (POST /upload). */
  url: URL | null;
  /** Display name (never a path). */
  fileName: string;
  videoId: string;
  index: MediaIndex;
  /** The index was created by this upload (and goes again if the upload fails). */
  createdIndex: boolean;
  subtitles?: SubtitlesSource | null;
}

export interface IngestDeps {
  catalog: Catalog;
  config: Config;
  files: DataDir;
  indexes: IndexService;
  log: Logger;
  ffprobe: () => Promise<string>;
  /** ffmpeg, which the probe reads the facts with when ffprobe crashes. */
  ffmpeg?: () => Promise<string>;
  /** Queues a stored video's analysis inside the transaction that marks it stored. */
  enqueue?: (tx: Catalog, videoId: string, now: Date) => Promise<void>;
  /** Called when a video's file is stored, probed (and queued); wakes the analysis workers. */
  onStored?: (video: Video) => void;
  /**
   * A video's row changed or went (VideoChanges.changed): the caches that hold it drop it. Given
   * the place, since a removed row can no longer say where it was.
   */
  videoChanged: (videoId: string, place: VideoPlace) => void;
  /** Stored videos go on to analysis (`processing`) rather than straight to `ready`. */
  analysis: boolean;
}

/** An upload between its admission and its end. */
interface InFlight {
  ctrl: AbortController;
  userId: string;
  /**
   * Bytes of the user's storage quota held for it: its declared size from admission, then as much
   * as has arrived. Held in this map (synchronously, with the check), so that parallel uploads
   * cannot each see the same free quota (issue 25: 8 uploads stored 3× the quota).
   */
  reserved: number;
  /** Its row is not written yet (admit() counts it as waiting meanwhile). */
  rowPending?: boolean;
  /** The owner's stored bytes when last read (by claim), and at how many bytes received. */
  stored?: number;
  storedReadAt: number;
}

/** How often (in bytes received) an upload reads its owner's stored bytes again for the quota. */
const STORED_REREAD_BYTES = 4 << 20;
/** Progress events are sent at most this often. */
const PROGRESS_EVERY_MS = 250;
/** How often (in bytes received) a download looks at the free disk space again (a statfs call). */
const DISK_CHECK_EVERY_BYTES = 1 << 20;

export class IngestService {
  /**
   * Downloads in flight (from authorization to the end), so that removing their video cancels them
   * and the admission can count them per user and in all.
   */
  private readonly inFlight = new Map<string, InFlight>();

  constructor(private readonly d: IngestDeps) {}

  /** Checks and fetches in one go (the JSON form of POST /remote-upload). */
  async remoteUpload(
    user: User,
    req: UploadRequest,
    emit: (e: UploadEvent) => void = () => {},
  ): Promise<UploadMetadata> {
    return this.fetchAndStore(await this.authorize(user, req), emit);
  }

  /**
   * The one admission check of every way in (URL uploads, file uploads): the user's stored bytes
   * (507), downloads in flight for the user and on the server, and videos waiting for or under
   * analysis (429). Cheap: two indexed counts and a map size. Returns the bytes the user may still
   * store (Infinity when unlimited). A limit of 0 is off.
   */
  async admit(user: User, declaredBytes: number | null = null): Promise<{ storageLeft: number }> {
    return this.admitWith(user, await userUsage(this.d.catalog, user.id), declaredBytes);
  }

  /**
   * admit() on what the user holds (`row`, read just before): the checks against the uploads in
   * flight are synchronous, so that the caller takes its slot in the same step.
   */
  private admitWith(
    user: User,
    row: { bytes: number; waiting: number },
    declaredBytes: number | null,
  ): { storageLeft: number } {
    const c = this.d.config;
    if (c.maxDownloads && this.inFlight.size >= c.maxDownloads) {
      throw tooManyRequests(
        `the server is busy: ${this.inFlight.size} downloads are in flight, the limit of --max-downloads (VIDQ_MAX_DOWNLOADS); retry in a minute`,
      );
    }
    if (c.userMaxDownloads) {
      let mine = 0;
      for (const f of this.inFlight.values()) if (f.userId === user.id) mine++;
      if (mine >= c.userMaxDownloads)
        throw tooManyRequests(
          `you have ${mine} downloads in flight, the per-user limit (--user-max-downloads, VIDQ_USER_MAX_DOWNLOADS); wait for one to finish, or ask the operator to raise it`,
        );
    }
    // Admitted uploads whose row is being written count as waiting already.
    for (const f of this.inFlight.values()) if (f.userId === user.id && f.rowPending) row.waiting++;
    if (c.userMaxQueued && row.waiting >= c.userMaxQueued) {
      throw tooManyRequests(
        `you have ${row.waiting} videos downloading or waiting for analysis, the per-user limit (--user-max-queued, VIDQ_USER_MAX_QUEUED); wait for some to be ready, or ask the operator to raise it`,
      );
    }
    const held = this.reservedBy(user.id);
    if (c.userMaxStorageBytes && row.bytes + held >= c.userMaxStorageBytes) {
      throw insufficientStorage(
        `your videos take ${row.bytes} bytes${held ? ` and uploads in flight hold ${held} more` : ''}, the per-user storage limit of ${c.userMaxStorageBytes} bytes (--user-max-storage-bytes, VIDQ_USER_MAX_STORAGE_BYTES); remove videos, or ask the operator to raise it`,
      );
    }
    const storageLeft = c.userMaxStorageBytes ? c.userMaxStorageBytes - row.bytes - held : Infinity;
    if (declaredBytes !== null && declaredBytes > storageLeft) throw this.overQuota(declaredBytes, storageLeft);
    return { storageLeft };
  }

  /** Quota bytes held by the user's uploads in flight (besides `except`). */
  private reservedBy(userId: string, except?: string): number {
    let held = 0;
    for (const [id, f] of this.inFlight) if (f.userId === userId && id !== except) held += f.reserved;
    return held;
  }

  /**
   * Holds `bytes` of the quota for an upload in flight (its declared size, or what has arrived):
   * checked and taken in one synchronous step against what the user stored and what their other
   * uploads hold. Returns the refusal, or null.
   */
  private claim(videoId: string, bytes: number): ApiError | null {
    const slot = this.inFlight.get(videoId);
    const quota = this.d.config.userMaxStorageBytes;
    if (!slot || !quota || bytes <= slot.reserved) return null;
    // The stored sum (SQL) is read again every few MiB, not at every chunk, and without holding up
    // the transfer (the last value counts meanwhile); the commit checks it exactly.
    if (bytes - slot.storedReadAt >= STORED_REREAD_BYTES) {
      slot.storedReadAt = bytes;
      storedBytesExcept(this.d.catalog, slot.userId, videoId).then(
        (stored) => (slot.stored = stored),
        () => {},
      );
    }
    const left = quota - (slot.stored ?? 0) - this.reservedBy(slot.userId, videoId);
    if (bytes > left) return this.overQuota(bytes, Math.max(0, left));
    slot.reserved = bytes;
    return null;
  }

  /**
   * Everything that can be refused before any byte is fetched (so the HTTP status still reflects
   * it): fields, URL shape and policy, free disk, the index. Creates the resource row (downloading).
   */
  async authorize(user: User, req: UploadRequest): Promise<AuthorizedUpload> {
    if (typeof req.index !== 'string')
      throw badRequest('index is required: the index_id or the name of an index (a new name creates the index)');
    if (typeof req.url !== 'string') throw badRequest('url is required: the http(s) address of a video file');
    const url = parseSourceUrl(req.url);
    const subtitles = parseSubtitlesUrl(req.subtitles_url);
    const allowPrivate = this.d.config.allowPrivateUrls;
    const up = await this.reserve(user, req.index, url, fileNameOf(null, url), async () => {
      await checkHost(url, { allowPrivate });
      if (subtitles) await checkHost(subtitles.url, { allowPrivate });
    });
    return { ...up, subtitles };
  }

  /**
   * The admission of a file sent in the request itself (POST /upload): the same checks as a URL
   * (free disk, admit(): quotas and slots, the index, declared size) before a byte of the body is read.
   */
  async authorizeFile(user: User, req: FileUploadRequest): Promise<AuthorizedUpload> {
    const { config } = this.d;
    if (typeof req.index !== 'string' || req.index === '')
      throw badRequest(
        'query parameter "index" is required (or a form field "index" before the file part): the index_id or the name of an index (a new name creates the index)',
      );
    if (req.declaredBytes !== null && req.declaredBytes > config.maxUploadBytes) {
      throw payloadTooLarge(
        `the file is ${req.declaredBytes} bytes; the upload limit is ${config.maxUploadBytes} bytes (--max-upload-bytes)`,
      );
    }
    if (req.declaredBytes === 0)
      throw badRequest(
        'the request body is empty; send the video file as the body (or as the "file" part of a multipart/form-data form)',
      );
    const name = typeof req.file_name === 'string' ? cleanFileName(req.file_name) : '';
    return this.reserve(user, req.index, null, name || 'upload', undefined, req.videoId, req.declaredBytes);
  }

  /**
   * The one reservation path of every upload, whatever brings the bytes: free disk, the source's
   * own checks, admit() (quotas and slots), then the index (found or created) and the resource row
   * (downloading) in one commit, and the in-flight slot.
   */
  private async reserve(
    user: User,
    indexRef: string,
    url: URL | null,
    fileName: string,
    checkSource?: () => Promise<unknown>,
    givenVideoId?: string,
    declaredBytes: number | null = null,
  ): Promise<AuthorizedUpload> {
    const { catalog, config, files, indexes } = this.d;
    if (files.freeBytes() < config.minFreeBytes)
      throw insufficientStorage(
        `not enough free disk space in the data directory (less than ${config.minFreeBytes} bytes); free some space and retry`,
      );
    await checkSource?.();
    // One admission at a time in this process, from the check to the row: another request cannot
    // slip in between (the row is counted as waiting from the check until it is written).
    return this.admitting(async () => {
      const usage = await userUsage(catalog, user.id);
      this.admitWith(user, usage, declaredBytes);
      const videoId = givenVideoId ?? newVideoId();
      const now = new Date();
      const slot: InFlight = {
        ctrl: new AbortController(),
        userId: user.id,
        reserved: declaredBytes ?? 0,
        rowPending: true,
        stored: usage.bytes,
        storedReadAt: 0,
      };
      this.inFlight.set(videoId, slot);
      let placed: { index: MediaIndex; created: boolean };
      try {
        placed = await catalog.write(async (tx) => {
          const r = await indexes.findOrCreateByName(tx, user, indexRef);
          await insertVideo(tx, {
            id: videoId,
            indexId: r.index.id,
            userId: user.id,
            sourceUrl: url ? url.toString() : 'upload:',
            fileName,
            status: 'downloading',
            stage: url ? 'downloading' : 'uploading',
            progress: 0,
            uploadedAt: now,
            updatedAt: now,
          });
          return r;
        });
      } catch (e) {
        this.inFlight.delete(videoId);
        throw e;
      }
      slot.rowPending = false;
      const { index, created } = placed;
      this.d.videoChanged(videoId, { userId: user.id, indexId: index.id });
      return { user, url, fileName, videoId, index, createdIndex: created };
    });
  }

  /** The admissions in turn (see reserve): each waits for the one before to have written its row. */
  private admissions: Promise<unknown> = Promise.resolve();
  private admitting<T>(fn: () => Promise<T>): Promise<T> {
    const turn = this.admissions.then(fn);
    this.admissions = turn.catch(() => {});
    return turn;
  }

  /**
   * Downloads, probes and stores an authorized upload; on failure removes every trace of it.
   * `clientGone` (the request's signal) cancels it: nobody would see the answer.
   */
  async fetchAndStore(
    up: AuthorizedUpload,
    emit: (e: UploadEvent) => void = () => {},
    clientGone?: AbortSignal,
  ): Promise<UploadMetadata> {
    const { config } = this.d;
    const url = up.url;
    if (!url) throw new ApiError(500, 'fetchAndStore needs an upload from a URL');
    return this.store(up, emit, 'downloading', clientGone, (tmp, h) =>
      downloadToFile(url, tmp, {
        policy: { allowPrivate: config.allowPrivateUrls },
        maxBytes: config.maxDownloadBytes,
        connectTimeoutMs: config.connectTimeoutMs,
        idleTimeoutMs: config.idleTimeoutMs,
        maxRedirects: config.maxRedirects,
        deadlineMs: config.downloadDeadlineMs,
        minRate: config.minDownloadRate,
        signal: h.signal,
        onResponse: ({ contentLength }) => h.onDeclared(contentLength),
        onProgress: h.onProgress,
      }),
    );
  }

  /**
   * Stores a file that arrives as the request's own bytes (POST /upload): raw, or the `file` part
   * of a multipart form. `clientGone` (the request's signal): a client that goes away aborts it.
   */
  async receiveAndStore(
    up: AuthorizedUpload,
    body: UploadBody,
    emit: (e: UploadEvent) => void = () => {},
    clientGone?: AbortSignal,
  ): Promise<UploadMetadata> {
    const { config } = this.d;
    return this.store(up, emit, 'uploading', clientGone, (tmp, h) => {
      h.onDeclared(body.declaredBytes);
      return receiveToFile(body, tmp, {
        maxBytes: config.maxUploadBytes,
        fallbackName: up.fileName,
        signal: h.signal,
        onProgress: h.onProgress,
      });
    });
  }

  /** Receives (through `receive`), probes and stores an authorized upload; on failure removes every trace of it. */
  private async store(
    up: AuthorizedUpload,
    emit: (e: UploadEvent) => void,
    stage: 'downloading' | 'uploading',
    clientGone: AbortSignal | undefined,
    receive: (tmp: string, hooks: ReceiveHooks) => Promise<Received>,
  ): Promise<UploadMetadata> {
    const { catalog, config, files, log } = this.d;
    const { user, videoId, index, createdIndex: created } = up;
    emit({ type: 'file_authorized', key: videoId, index_id: index.id, file_name: up.fileName });

    const slot = this.inFlight.get(videoId) ?? {
      ctrl: new AbortController(),
      userId: user.id,
      reserved: 0,
      storedReadAt: 0,
    };
    const ctrl = slot.ctrl;
    this.inFlight.set(videoId, slot);
    const onGone = () => ctrl.abort(new ApiError(499, 'the client closed the connection; the upload was cancelled'));
    if (clientGone?.aborted) onGone();
    clientGone?.addEventListener('abort', onGone, { once: true });
    const tmp = files.tempFile();
    const subsTmp = up.subtitles ? files.tempFile() : null;
    const vlog = log.child({ video_id: videoId, index_id: index.id });
    const started = performance.now();
    try {
      let lastEmit = 0;
      let lastWrite = 0;
      // Free space again, as the file arrives: what was free when the upload began may be taken.
      let diskCheckedAt = 0;
      const dl = await receive(tmp, {
        signal: ctrl.signal,
        onDeclared: (contentLength) => {
          const refused = contentLength === null ? null : this.claim(videoId, contentLength);
          if (refused) ctrl.abort(refused);
          if (contentLength !== null && files.freeBytes() - contentLength < config.minFreeBytes) {
            ctrl.abort(
              insufficientStorage(
                `the file is ${contentLength} bytes, and storing it would leave less than ${config.minFreeBytes} bytes free in the data directory; free some space and retry`,
              ),
            );
          }
        },
        onProgress: (received, total) => {
          const refused = this.claim(videoId, received);
          if (refused) ctrl.abort(refused);
          if (received - diskCheckedAt >= DISK_CHECK_EVERY_BYTES) {
            diskCheckedAt = received;
            if (files.freeBytes() < config.minFreeBytes) {
              ctrl.abort(
                insufficientStorage(
                  `the disk filled up during the ${stage === 'uploading' ? 'upload' : 'download'}: less than ${config.minFreeBytes} bytes are free in the data directory after ${received} bytes; free some space and retry`,
                ),
              );
            }
          }
          const t = performance.now();
          if (t - lastEmit < PROGRESS_EVERY_MS) return;
          lastEmit = t;
          const percentage = total ? Math.min(99, Math.floor((received / total) * 100)) : 0;
          emit({ type: 'progress', key: videoId, stage, percentage, bytes: received, total_bytes: total });
          if (t - lastWrite > 1000) {
            lastWrite = t;
            // Not awaited: the transfer goes on while the row is written (a lost write is only progress).
            void this.setProgress(user.id, index.id, videoId, stage, percentage).catch(() => {});
          }
        },
      });
      // Refused on the last chunk (the disk filled up, the quota ran out): the transfer itself ended
      // well, so the refusal is only in the signal; later steps would fail with a bare AbortError.
      if (ctrl.signal.aborted && ctrl.signal.reason instanceof ApiError) throw ctrl.signal.reason;
      // The subtitles before the video is stored: a bad file fails the upload as a whole.
      if (up.subtitles && subsTmp) {
        await fetchSubtitles(up.subtitles, subsTmp, {
          policy: { allowPrivate: config.allowPrivateUrls },
          connectTimeoutMs: config.connectTimeoutMs,
          idleTimeoutMs: config.idleTimeoutMs,
          maxRedirects: config.maxRedirects,
          signal: ctrl.signal,
        });
      }
      emit({
        type: 'progress',
        key: videoId,
        stage: 'probing',
        percentage: 100,
        bytes: dl.bytes,
        total_bytes: dl.bytes,
      });
      await this.setProgress(user.id, index.id, videoId, 'probing', 100);
      const info = await probeFile(await this.d.ffprobe(), tmp, {
        maxDurationSec: config.maxDurationSec,
        signal: ctrl.signal,
        ffmpeg: await this.d.ffmpeg?.(),
      });

      const twin = await twinInIndex(catalog, index.id, dl.sha256, videoId);
      if (twin) {
        // Identical bytes already in this index: keep one copy, answer with its key.
        rmSync(tmp, { force: true });
        if (subsTmp) rmSync(subsTmp, { force: true });
        await deleteVideoRow(catalog, videoId);
        this.d.videoChanged(videoId, { userId: user.id, indexId: index.id });
        const meta = metadataOf(twin);
        emit(meta);
        emit({
          type: 'progress',
          key: twin.id,
          stage: 'stored',
          percentage: 100,
          bytes: dl.bytes,
          total_bytes: dl.bytes,
        });
        emit({ type: 'complete', key: twin.id, index_id: index.id, status: twin.status, duplicate: true });
        vlog.info('upload matched an existing video', { existing: twin.id });
        return meta;
      }

      const rel = files.sourceRelPath(videoId, info.ext);
      const abs = files.abs(rel);
      mkdirSync(dirname(abs), { recursive: true });
      files.moveIntoMedia(tmp, abs);
      if (up.subtitles && subsTmp) files.moveIntoMedia(subsTmp, join(dirname(abs), `subtitles.${up.subtitles.ext}`));
      const stored = await this.markStored(videoId, rel, dl.fileName, dl.bytes, dl.sha256, info);
      if (!stored) {
        // Removed (or its index purged) while downloading: the removal already took the row.
        files.removeVideoFiles(videoId);
        throw notFound('the video was removed while it was being uploaded');
      }
      this.d.videoChanged(videoId, { userId: user.id, indexId: index.id });
      const meta = metadataOf(stored);
      emit(meta);
      // The hosted product's order: metadata, then progress, then complete (moonshine-sdk.md).
      emit({
        type: 'progress',
        key: videoId,
        stage: 'stored',
        percentage: 100,
        bytes: dl.bytes,
        total_bytes: dl.bytes,
      });
      emit({ type: 'complete', key: videoId, index_id: index.id, status: stored.status, duplicate: false });
      vlog.info('video stored', {
        bytes: dl.bytes,
        duration_s: info.durationSec,
        ms: Math.round(performance.now() - started),
      });
      this.d.onStored?.(stored);
      return meta;
    } catch (e) {
      rmSync(tmp, { force: true });
      if (subsTmp) rmSync(subsTmp, { force: true });
      files.removeVideoFiles(videoId);
      await catalog.write(async (tx) => {
        await deleteVideoRow(tx, videoId);
        // An index this request created stays only if something else landed in it meanwhile.
        if (created) await deleteIndexIfEmpty(tx, index.id);
      });
      this.d.videoChanged(videoId, { userId: user.id, indexId: index.id });
      const err = e instanceof ApiError ? e : new ApiError(500, `upload failed: ${(e as Error).message}`);
      vlog.warn('upload failed', { status: err.status, reason: err.message });
      emit({ type: 'error', error: err.status, message: err.message });
      throw err;
    } finally {
      clientGone?.removeEventListener('abort', onGone);
      this.inFlight.delete(videoId);
    }
  }

  private overQuota(bytes: number, left: number): ApiError {
    return insufficientStorage(
      `the file (${bytes} bytes or more) does not fit in what is left of your storage limit (${left} bytes; --user-max-storage-bytes, VIDQ_USER_MAX_STORAGE_BYTES); remove videos, or ask the operator to raise it`,
    );
  }

  /**
   * `GET /status` (the hosted SDK's progress poll): one 0–100 value per stage, `[transfer,
   * analysis]`, all 100 when the video is ready. The SDK averages the list until it reaches 100, so
   * nothing but a finished video may read 100 throughout; a failed one is an error (422), since a
   * list could only leave the client polling forever.
   */
  async stageProgress(
    fileId: string,
  ): Promise<{ status: number[]; stages: { name: string; progress: number }[]; state: string }> {
    const v = await this.videoForProgress(fileId);
    const transfer = v.status === 'processing' || v.status === 'ready' ? 100 : Math.min(99, Math.floor(v.progress));
    const analysis = v.status === 'ready' ? 100 : v.status === 'processing' ? Math.min(99, Math.floor(v.progress)) : 0;
    return {
      status: [transfer, analysis],
      stages: [
        { name: 'transfer', progress: transfer },
        { name: 'analysis', progress: analysis },
      ],
      state: v.status,
    };
  }

  /** `GET /compress-status`: vidq stores files as they come, so this is the transfer's progress. */
  async storedProgress(fileId: string): Promise<number> {
    return (await this.stageProgress(fileId)).status[0]!;
  }

  private async videoForProgress(fileId: string): Promise<Video> {
    const id = fileId.split('.')[0]!; // the hosted product's ids carry the file's extension
    if (id === '') throw badRequest('a file_id is required (the `key` of the upload)');
    const v = await videoById(this.d.catalog, id);
    if (!v) throw notFound(`file ${JSON.stringify(id.slice(0, 80))} was not found`);
    if (v.status === 'failed') throw unprocessable(`the video failed: ${v.error ?? 'no reason was recorded'}`);
    return v;
  }

  /** True while this process is downloading the video (the maintenance job leaves it alone). */
  isBusy(videoId: string): boolean {
    return this.inFlight.has(videoId);
  }

  /** Stops a download in flight (the maintenance job's stuck check); false when there is none. */
  cancel(videoId: string, reason: ApiError): boolean {
    const f = this.inFlight.get(videoId);
    f?.ctrl.abort(reason);
    return !!f;
  }

  private async setProgress(
    userId: string,
    indexId: string,
    videoId: string,
    stage: string,
    progress: number,
  ): Promise<void> {
    await setTransferProgress(this.d.catalog, videoId, stage, progress);
    this.d.videoChanged(videoId, { userId, indexId });
  }

  /** Marks the row stored and queues its analysis in one commit, so a crash cannot split them. */
  private markStored(
    videoId: string,
    rel: string,
    fileName: string,
    bytes: number,
    sha256: string,
    info: MediaInfo,
  ): Promise<Video | undefined> {
    return this.d.catalog.write(async (tx) => {
      const now = new Date();
      // The quota once more, in the commit itself: what other uploads stored meanwhile counts too.
      const quota = this.d.config.userMaxStorageBytes;
      if (quota) {
        const owner = await videoById(tx, videoId);
        if (owner) await lockUserQuota(tx, owner.userId);
        const others = owner ? await storedBytesExcept(tx, owner.userId, videoId) : 0;
        if (others + bytes > quota) throw this.overQuota(bytes, Math.max(0, quota - others));
      }
      const stored = await markVideoStored(tx, videoId, { rel, fileName, bytes, sha256, info }, this.d.analysis, now);
      if (stored && this.d.analysis) await this.d.enqueue?.(tx, videoId, now);
      return stored;
    });
  }

  /** POST /remove-from-index: rows first, then files; cancels a download in flight. */
  async remove(user: User, projectId: unknown, videoId: unknown): Promise<void> {
    if (typeof projectId !== 'string' || projectId === '')
      throw badRequest('project_id is required: the index_id or the name of the index');
    if (typeof videoId !== 'string' || videoId === '')
      throw badRequest('video_id is required: the file_id of the video');
    // The hosted SDK sends the bare index name here; the spec's index_id works as before.
    const index = await this.d.indexes.resolve(user, projectId, { byName: true });
    const video = await videoInIndex(this.d.catalog, index.id, videoId);
    if (!video) throw notFound(`video ${JSON.stringify(videoId.slice(0, 80))} is not in this index`);
    await this.deleteVideos(user.id, index.id, [video.id]);
  }

  /** Deletes videos' rows, then their files (also used by the purge). */
  async deleteVideos(userId: string, indexId: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    for (const id of ids)
      this.inFlight.get(id)?.ctrl.abort(new ApiError(404, 'the video was removed while it was being uploaded'));
    // Their face appearances go with them (cascade); people left with none go too.
    await this.d.catalog.write((tx) => deleteVideoRows(tx, indexId, ids));
    for (const id of ids) this.d.videoChanged(id, { userId, indexId });
    for (const id of ids) this.d.files.removeVideoFiles(id);
  }

  /**
   * Start-up recovery: downloads cut off by a crash cannot resume (their .part files are gone), so
   * their rows become `failed` with the reason; folders without a row are deleted.
   */
  async recover(): Promise<{ interrupted: number; orphans: number; temp: number }> {
    const { catalog, files } = this.d;
    const temp = files.clearTemp();
    const interrupted = await failInterruptedTransfers(
      catalog,
      'the download was interrupted by a restart of the service; upload the URL again',
    );
    // A crash between the rename into media/ and the row update leaves the file of a row that
    // never became stored: it can never be served or analysed.
    for (const id of interrupted) files.removeVideoFiles(id);
    const cut = interrupted.length;
    const onDisk = files.listVideoDirs();
    const known = await existingVideoIds(catalog, onDisk);
    let orphans = 0;
    for (const id of onDisk) {
      if (!known.has(id)) {
        files.removeVideoFiles(id);
        orphans++;
      }
    }
    return { interrupted: cut, orphans, temp };
  }
}

export function metadataOf(v: Video): UploadMetadata {
  return {
    type: 'metadata',
    fps: formatFps(v.fps ?? 0),
    duration: v.durationSec ?? 0,
    fileSize: formatFileSize(v.sizeBytes ?? 0),
    file_size_bytes: v.sizeBytes ?? 0,
    key: v.id,
    percentage: v.status === 'failed' ? 0 : 100,
  };
}

/**
 * A size the way the hosted product writes `fileSize`: megabytes (2^20 bytes) with two decimals and
 * the three characters " MB" — its SDK drops the last three characters and compares the number
 * with 650 to tell a large file, so the unit is always MB, whatever the size.
 */
export function formatFileSize(bytes: number): string {
  return `${(bytes / 1048576).toFixed(2)} MB`;
}

export function formatFps(fps: number): string {
  return String(Math.round(fps * 1000) / 1000);
}
