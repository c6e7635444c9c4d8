/**
 * Signed upload URLs, the hosted SDK's way to send a local file (`POST /api-pre-upload`, then a
 * `PUT` of the raw file to the URL). A grant is a row bound to its key (the future file_id), user,
 * index and size; the URL carries an HMAC over key, size and expiry, so it cannot be altered, and
 * taking the grant is one conditional UPDATE, so a URL works once even under concurrent PUTs.
 * The URL also names (signed) the token that asked for it: revoking that token voids the URL, and
 * a user holds at most --user-max-queued unused URLs at once.
 */
import type { Config } from '../config';
import {
  badRequest,
  forbidden,
  gone,
  insufficientStorage,
  notFound,
  payloadTooLarge,
  tooManyRequests,
} from '../errors';
import { hmac, isIndexIdShape, newVideoId, sameString } from '../ids';
import { type IndexService, validateIndexName } from '../indexes/service';
import type { Catalog } from '../storage/catalog';
import { insertUploadGrant, releaseUploadGrant, takeUploadGrant, uploadGrant } from '../storage/repositories/grants';
import type { UploadGrant, User } from '../storage/rows';
import { cleanFileName } from './download';

export interface GrantRequest {
  /** The index name or id (already split off the token by the caller). */
  index: string;
  filename: unknown;
  filesize: unknown;
  /** Id of the token that asks: the URL is refused once it is revoked. */
  tokenId: string;
}

export interface IssuedGrant {
  key: string;
  /** Path and query of the upload URL (the caller makes it absolute). */
  path: string;
  expiresAt: Date;
}

/** Where signed PUTs go: `/api-upload/<key>?expires=<ms>&token_id=<id>&sig=<hmac>`. */
export const UPLOAD_PATH_PREFIX = '/api-upload/';

export class UploadGrants {
  constructor(
    private readonly d: {
      catalog: Catalog;
      config: Config;
      indexes: IndexService;
      secret: Buffer;
      /** The admission check of every upload: throws 429/507 when the user may not upload now. */
      admit: (user: User) => Promise<{ storageLeft: number }>;
      /** Whether a token (by id) exists and is not revoked. */
      tokenLive: (tokenId: string) => Promise<boolean>;
    },
  ) {}

  /** Checks what can be checked before the file is sent, and issues a signed, expiring URL. */
  async issue(user: User, req: GrantRequest, now = new Date()): Promise<IssuedGrant> {
    const { config, catalog } = this.d;
    const indexRef = validateIndexName(req.index);
    // An index_id must be one of the user's (a name is theirs to create when the file arrives).
    if (isIndexIdShape(indexRef) && !(await this.d.indexes.find(user, indexRef, { byName: true })))
      throw notFound(`index ${JSON.stringify(indexRef)} was not found`);
    if (typeof req.filename !== 'string' || req.filename.trim() === '')
      throw badRequest('field "filename" is required: the name of the video file');
    const size =
      typeof req.filesize === 'string' && /^\d{1,15}$/.test(req.filesize) ? Number(req.filesize) : req.filesize;
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size <= 0)
      throw badRequest('field "filesize" must be the size of the file in bytes (a whole number > 0)');
    if (size > config.maxUploadBytes)
      throw payloadTooLarge(
        `the file is ${size} bytes; the upload limit is ${config.maxUploadBytes} bytes (--max-upload-bytes)`,
      );
    const { storageLeft } = await this.d.admit(user);
    if (size > storageLeft)
      throw insufficientStorage(
        `the file (${size} bytes) does not fit in what is left of your storage limit (${storageLeft} bytes; --user-max-storage-bytes); remove videos, or ask the operator to raise it`,
      );
    const key = newVideoId();
    const expiresAt = new Date(now.getTime() + config.uploadUrlTtlSec * 1000);
    // Unused URLs count against the same cap as queued videos: each is an upload to come.
    const outstanding = await insertUploadGrant(
      catalog,
      {
        id: key,
        userId: user.id,
        indexRef,
        fileName: cleanFileName(req.filename) || 'upload',
        sizeBytes: size,
        expiresAt,
        createdAt: now,
      },
      config.userMaxQueued,
      now,
    );
    if (outstanding !== null)
      throw tooManyRequests(
        `you hold ${outstanding} unused upload URLs, the per-user limit (--user-max-queued, VIDQ_USER_MAX_QUEUED); use them, or wait for them to expire (--upload-url-ttl-sec)`,
      );
    const expires = String(expiresAt.getTime());
    const tokenId = encodeURIComponent(req.tokenId);
    return {
      key,
      path: `${UPLOAD_PATH_PREFIX}${key}?expires=${expires}&token_id=${tokenId}&sig=${this.sign(key, size, expires, req.tokenId)}`,
      expiresAt,
    };
  }

  /**
   * Checks a PUT's URL and takes its grant (once): 403 for a URL that was not signed here or whose
   * token was revoked, 410 for one that expired or was used already. Returns the grant, whose user
   * the upload is for.
   */
  async take(
    key: string,
    url: { expires?: string; token_id?: string; sig?: string },
    now = new Date(),
  ): Promise<UploadGrant> {
    const { expires, token_id: tokenId, sig } = url;
    const denied = () => forbidden('this upload URL is not valid; ask POST /api-pre-upload for a new one');
    if (!expires || !sig || !tokenId || !/^\d{1,15}$/.test(expires)) throw denied();
    const grant = await uploadGrant(this.d.catalog, key);
    // Unknown keys and bad signatures answer alike: a probe learns nothing about which keys exist.
    if (
      !grant ||
      !sameString(this.sign(key, grant.sizeBytes, expires, tokenId), sig) ||
      Number(expires) !== grant.expiresAt.getTime()
    )
      throw denied();
    if (!(await this.d.tokenLive(tokenId)))
      throw forbidden('the token that asked for this upload URL was revoked; the URL no longer works');
    if (grant.expiresAt.getTime() <= now.getTime())
      throw gone('this upload URL has expired; ask POST /api-pre-upload for a new one');
    const taken = await takeUploadGrant(this.d.catalog, key, now);
    if (!taken)
      throw gone('this upload URL was used already; each works once (ask POST /api-pre-upload for a new one)');
    return taken;
  }

  /** Makes a taken grant usable again: its PUT was refused before any byte of the file was read. */
  release(key: string): Promise<void> {
    return releaseUploadGrant(this.d.catalog, key);
  }

  private sign(key: string, size: number, expires: string, tokenId: string): string {
    return hmac(this.d.secret, `api-upload\n${key}\n${size}\n${expires}\n${tokenId}`);
  }
}
