/**
 * The analyzer contract. Each analyzer is one stage of a video's pipeline: it reads the video (or
 * what earlier stages stored) and returns what it found; the pipeline stores that output in the
 * same transaction that moves the job to the next stage, so a crash never duplicates it.
 */
import type { Logger } from '../log';
import type { Catalog } from '../storage/catalog';
import type { Segment, SegmentKind } from '../storage/rows';
import type { FrameHints } from './frame-hints';
import { FrameStream, type SampledFrame } from './frame-stream';

/**
 * Thrown when an engine cannot run on this installation (its model or runtime is missing, e.g. in
 * an executable built without it). The pipeline then skips that analyzer and records why in the
 * resource's metadata instead of failing the video.
 */
export class EngineUnavailableError extends Error {
  override readonly name = 'EngineUnavailableError';
}

export interface EngineInfo {
  /** What it does: shots, ocr, objects, vad, stt, embeddings. */
  kind: string;
  /** Which engine, e.g. "paddleocr-ppocrv4 (onnxruntime)". */
  name: string;
  version?: string;
}

export interface VideoToAnalyze {
  id: string;
  /** Absolute path of the stored file. */
  path: string;
  /** Absolute path of the video's folder (derived files go here, e.g. frames/). */
  dir: string;
  durationSec: number;
  fps: number;
  width: number;
  height: number;
  hasAudio: boolean;
}

export interface NewSegment {
  kind: SegmentKind;
  start: number;
  end: number;
  text: string;
  confidence?: number | null;
  extra?: Record<string, unknown> | null;
}

export interface NewFrame {
  t: number;
  shot: number;
  /** File name inside `<video dir>/frames/`. */
  file: string;
}

export interface StageContext {
  video: VideoToAnalyze;
  ffmpeg: string;
  signal: AbortSignal;
  log: Logger;
  /** Progress within this stage, 0..1 (the pipeline turns it into overall progress and ETA). */
  progress(fraction: number): void;
  /** Frames stored by the visual stage (absolute paths). */
  frames(): SampledFrame[];
  /**
   * Segments stored by earlier stages; within a group, also those of the frame-picking stage once
   * its frame stream has ended.
   */
  segments(kinds?: SegmentKind[]): Segment[];
  /**
   * The sampled frames as the frame-picking stage running beside this one picks them, or the stored
   * ones. Hand-built contexts may leave it out: readers then use frames() (see framesOf).
   */
  frameStream?: FrameStream;
  /** Given to the frame-picking stage: hands a kept frame to the readers once it is final. */
  emitFrame?(frame: SampledFrame): void;
  /**
   * Given to the frame-picking stage when a stage of its group reads probes: hands on a candidate
   * that is not kept, so that the text reader reads the picture at most PROBE_GAP_SEC apart. Its
   * file is in `<video dir>/probes/`; the reader may delete it, and the folder goes after the group.
   */
  emitProbe?(frame: SampledFrame): void;
  /** The kept frames and the probes in time order, for stages that read probes (see Analyzer.readsProbes). */
  probeStream?: FrameStream;
  /** What the stages of the group tell each other about the frames (whether a person may be in one). */
  hints?: FrameHints;
}

/** The frames a reading stage works through: the live stream when there is one, else the stored frames. */
export function framesOf(ctx: Pick<StageContext, 'frames' | 'frameStream'>): FrameStream {
  return ctx.frameStream ?? FrameStream.of(ctx.frames());
}

export interface StageResult {
  /** New segments; the stage's earlier segments (same kinds) are replaced. */
  segments?: NewSegment[];
  /** Sampled frames (visual stage only); replaces earlier ones. */
  frames?: NewFrame[];
  /** Summary for the resource metadata (engine, counts, ...). */
  summary?: Record<string, unknown>;
  /**
   * Extra writes in the stage's transaction (e.g. embeddings of existing segments): `tx` is the
   * catalog's write transaction (either dialect), awaited before it commits.
   */
  apply?(tx: Catalog): Promise<void>;
}

export interface Analyzer {
  /** Stage name, e.g. "analyzing:ocr". */
  readonly stage: string;
  /** Segment kinds this stage produces (replaced when the stage re-runs). */
  readonly kinds: readonly SegmentKind[];
  readonly info: EngineInfo;
  /** Relative cost per second of video, for progress and ETA. */
  readonly weight: number;
  /**
   * May run at the same time as the neighbouring concurrent analyzers: it reads only the video,
   * what earlier groups stored, or the frames of a frame-picking stage in its group (as a stream).
   */
  readonly concurrent?: boolean;
  /** Picks the sampled frames (visual); concurrent readers in its group get them as they are picked. */
  readonly producesFrames?: boolean;
  /** Reads the sampled frames: runs beside the frame-picking stage only through ctx.frameStream. */
  readonly readsFrames?: boolean;
  /** Reads the probes between kept frames too (ctx.probeStream), the text reader: text on screen for 2 s is not missed. */
  readonly readsProbes?: boolean;
  /** Tells ctx.hints, for every frame it reads, whether a person may be in it (the objects stage). */
  readonly tellsPersons?: boolean;
  run(ctx: StageContext): Promise<StageResult>;
  /** Frees models (called when the worker stops). */
  close?(): Promise<void> | void;
}
