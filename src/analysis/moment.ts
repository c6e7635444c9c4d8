/**
 * Reads what is written on screen at one moment of a stored video, on demand: analysis keeps a
 * frame every few seconds, so text that changes between them (counters, clocks, subtitles) is read
 * from the frame at the asked moment instead (ffmpeg seeks there; OCR as in the analysis). The HTTP
 * server uses it for questions about "this moment"; the OCR models load on the first such question.
 */
import type { Logger } from '../log';
import { OcrAnalyzer } from './stages/ocr';
import type { TextBlock } from './stages/ocr-grouping';

/** Recent moments kept, so asking again about the same moment costs nothing. */
const CACHE_SIZE = 64;
/** Longest a read may take before the answer goes on without it. */
const READ_TIMEOUT_MS = 10_000;

export class MomentReader {
  private ocr: Promise<OcrAnalyzer> | null = null;
  private readonly cache = new Map<string, Promise<TextBlock[]>>();

  constructor(
    private readonly d: {
      ffmpeg: () => Promise<string>;
      /** The OCR model folder (the executable extracts it); undefined: the npm package's. */
      ocrModelDir: () => Promise<string | undefined>;
      log: Logger;
    },
  ) {}

  /**
   * The text blocks on screen at `t` seconds of the file at `path` (cached by `key`, e.g. the video
   * id). Empty when nothing is written there, or when the read fails (logged): the caller then has
   * the sampled frames' text to go on.
   */
  read(key: string, path: string, t: number): Promise<TextBlock[]> {
    const id = `${key}@${t.toFixed(3)}`;
    const hit = this.cache.get(id);
    if (hit) return hit;
    const read = this.readNow(path, t).catch((e: Error) => {
      this.d.log.warn('could not read the moment', { t, reason: e.message });
      this.cache.delete(id);
      return [];
    });
    this.cache.set(id, read);
    if (this.cache.size > CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    return read;
  }

  async close(): Promise<void> {
    const ocr = this.ocr;
    this.ocr = null;
    if (ocr) await (await ocr.catch(() => null))?.close();
  }

  private async readNow(path: string, t: number): Promise<TextBlock[]> {
    if (!this.ocr) {
      const loading = this.d.ocrModelDir().then((modelDir) => new OcrAnalyzer({ modelDir }));
      // A failed load (e.g. the models could not be extracted) is retried on the next question.
      loading.catch(() => {
        if (this.ocr === loading) this.ocr = null;
      });
      this.ocr = loading;
    }
    const ocr = await this.ocr;
    const ffmpeg = await this.d.ffmpeg();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>(
      (_, reject) =>
        (timer = setTimeout(() => reject(new Error(`no answer within ${READ_TIMEOUT_MS / 1000} s`)), READ_TIMEOUT_MS)),
    );
    try {
      return await Promise.race([ocr.readAt(ffmpeg, path, t), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
