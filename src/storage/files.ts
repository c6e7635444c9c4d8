/**
 * The data directory's layout. Every path is built from ids the service generated, never from
 * names that came from outside.
 *
 *   vidq.db                 SQLite database
 *   secret.key              HMAC key of signed media links (0600)
 *   catalog-id              with --media-dir: the id written into the media folder (media/.vidq-catalog)
 *   default-token.txt       token of the default user, written once (0600)
 *   media/<video_id>/       one folder per video: source.<ext> and derived files (under the media
 *                           root: the data directory unless --media-dir names another, e.g. a
 *                           shared mount; the database keeps paths relative to the media root)
 *   tmp/                    downloads in progress (emptied at start-up)
 *   bin/                    ffmpeg/ffprobe extracted from the executable
 *   assets/<group>-<hash>/  analysis models, wasm files and libraries extracted from the executable
 */
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statfsSync,
  writeFileSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { isVideoIdShape, randomId } from '../ids';

const EXT_RE = /^[a-z0-9]{1,5}$/;

export class DataDir {
  constructor(
    readonly root: string,
    /** Where media/ lives: the data directory itself unless --media-dir says otherwise. */
    readonly mediaRoot: string = root,
  ) {}

  get dbFile() {
    return join(this.root, 'vidq.db');
  }
  get tmpDir() {
    return join(this.root, 'tmp');
  }
  get mediaDir() {
    return join(this.mediaRoot, 'media');
  }
  get binDir() {
    return join(this.root, 'bin');
  }
  get assetsDir() {
    return join(this.root, 'assets');
  }
  get defaultTokenFile() {
    return join(this.root, 'default-token.txt');
  }

  ensure(): void {
    for (const d of [this.root, this.tmpDir, this.mediaRoot, this.mediaDir])
      mkdirSync(d, { recursive: true, mode: 0o700 });
  }

  /** A fresh temporary file path for a download. */
  tempFile(): string {
    return join(this.tmpDir, `${randomId(16)}.part`);
  }

  videoDir(videoId: string): string {
    if (!isVideoIdShape(videoId)) throw new Error(`not a video id: ${videoId}`);
    return join(this.mediaDir, videoId);
  }

  /** Relative storage path (as kept in the database) of a video's source file. */
  sourceRelPath(videoId: string, ext: string): string {
    if (!EXT_RE.test(ext)) throw new Error(`bad extension: ${ext}`);
    if (!isVideoIdShape(videoId)) throw new Error(`not a video id: ${videoId}`);
    return `media/${videoId}/source.${ext}`;
  }

  /** The absolute path of a storage path kept in the database (relative to the media root). */
  abs(relPath: string): string {
    if (relPath.includes('..') || relPath.startsWith('/')) throw new Error(`bad storage path: ${relPath}`);
    return join(this.mediaRoot, relPath);
  }

  /**
   * Moves a finished download (in tmp/, under the data directory) to its place under the media
   * root. A media root on another file system (a shared mount) cannot take a rename: the file is
   * copied next to its place and renamed there, so a reader never sees half a file.
   */
  moveIntoMedia(from: string, to: string): void {
    try {
      renameSync(from, to);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
      const partial = `${to}.${randomId(8)}.part`;
      try {
        copyFileSync(from, partial);
        renameSync(partial, to);
      } finally {
        rmSync(partial, { force: true });
      }
      rmSync(from, { force: true });
    }
  }

  removeVideoFiles(videoId: string): void {
    // A job still analysing the video can write a file into a folder being deleted (ENOTEMPTY):
    // try again a few times. Whatever it writes after that, the job deletes when it ends, since it
    // sees the removal (jobs/analyse-job.ts); the removal itself has happened and is not an error.
    for (let attempt = 1; ; attempt++) {
      try {
        rmSync(this.videoDir(videoId), { recursive: true, force: true });
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOTEMPTY') throw e;
        if (attempt === 5) return;
      }
    }
  }

  /**
   * A media folder other than the data directory belongs to one catalog: start-up recovery deletes
   * the video folders its catalog does not know, so a second catalog on the same folder would
   * delete the first one's files. The first start writes the catalog's id into media/; a start of
   * another catalog on that folder is refused with the reason. `catalogId`: the id the catalog
   * keeps (catalogIdentity, issue 33), the same on every node with a data directory of its own;
   * without it, the data directory's (catalog-id). Returns an error message, or null.
   */
  claimMediaRoot(catalogId?: string): string | null {
    if (this.mediaRoot === this.root) return null;
    const mine = catalogId ?? this.localCatalogId();
    const marker = join(this.mediaDir, '.vidq-catalog');
    if (!existsSync(marker)) {
      try {
        writeSecret(marker, mine);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
    }
    const owner = readFileSync(marker, 'utf8').trim();
    if (owner === mine) return null;
    return (
      `--media-dir ${this.mediaRoot} holds the media of another vidq catalog (${marker} names ${owner}, this data ` +
      `directory's catalog is ${mine}); two catalogs on one media folder would delete each other's files. ` +
      'Give this data directory a media folder of its own.'
    );
  }

  /** The data directory's catalog id (catalog-id), made on first use. */
  localCatalogId(): string {
    const idFile = join(this.root, 'catalog-id');
    if (!existsSync(idFile)) writeSecret(idFile, randomId(24));
    return readFileSync(idFile, 'utf8').trim();
  }

  /** Downloads interrupted by a crash leave .part files; none of them can be resumed. */
  clearTemp(): number {
    let n = 0;
    for (const f of readdirSync(this.tmpDir)) {
      rmSync(join(this.tmpDir, f), { recursive: true, force: true });
      n++;
    }
    return n;
  }

  /** Video folders on disk (by id), to find orphans left by a crash between row and file deletion. */
  listVideoDirs(): string[] {
    if (!existsSync(this.mediaDir)) return [];
    return readdirSync(this.mediaDir).filter(isVideoIdShape);
  }

  /** Free bytes where a download lands first (tmp/) and where it is kept (media/): the smaller. */
  freeBytes(): number {
    const free = (dir: string) => {
      const s = statfsSync(dir);
      return Number(s.bavail) * Number(s.bsize);
    };
    return this.mediaRoot === this.root ? free(this.root) : Math.min(free(this.root), free(this.mediaRoot));
  }

  /** The HMAC key for signed media links, created on first use. */
  secretKey(): Buffer {
    const file = join(this.root, 'secret.key');
    if (!existsSync(file)) writeSecret(file, randomBytes(32).toString('hex'));
    return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
  }
}

export function writeSecret(file: string, content: string): void {
  writeFileSync(file, content, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
}
