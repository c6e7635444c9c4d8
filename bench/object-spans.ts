/**
 * bench/object-spans: precision and recall of the objects analyzer's spans against what
 * ../shared/media/MANIFEST.md says each clip shows (as COCO labels and seconds, below), with and
 * without weak-but-persistent detections (objects.ts, promotePersistent).
 *
 *   bun bench/object-spans.ts [--interval 5]
 *
 * Precision: seconds of predicted spans covered by a truth span of the same label, over all
 * predicted seconds (a label the MANIFEST does not mention counts as wrong, which is strict: it
 * lists what a person would name, not every cup). Recall: truth seconds covered by a predicted span
 * of the label. The frames come from one run of the visual stage; detection runs once per clip.
 *
 * Result (2026-11, frames every 5 s, and every 2 s): promoting weak but persistent detections
 * added only false spans (a "tv" on the white wall of people-one-by-one at 0.20–0.25 for a minute,
 * "bottle"/"cup" on the birthday desk) and not the cake, which CenterNet scores 0.21–0.23 in 2 of 8
 * frames, never in a row: precision 0.756 → 0.637, recall 0.558 → 0.558. So the analyzer does
 * not promote them; this bench stays to measure the next attempt (e.g. a detector that sees cakes).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  DEFAULT_OBJECTS,
  ObjectsAnalyzer,
  applyThresholds,
  mergeSpans,
  overlap,
  type FrameObjects,
  type ObjectsOptions,
  type RawDetection,
  type RawFrame,
} from '../src/analysis/stages/objects';
import { shotBounds } from '../src/analysis/stages/frames';
import { DEFAULT_VISUAL, VisualAnalyzer } from '../src/analysis/stages/visual';
import { createLogger } from '../src/log';
import { resolveBinaries } from '../src/media/binaries';
import { probeFile } from '../src/media/probe';
import type { Segment } from '../src/storage/schema';

/**
 * Weak but persistent: a label other than person that CenterNet sees below `minScore` but at least
 * WEAK_MIN_SCORE in PERSIST_FRAMES or more consecutive frames of one shot, at about the same place
 * (each box overlapping the previous one), with a mean score of at least WEAK_MEAN_SCORE, is kept
 * in those frames: one frame's 0.2 is noise, the same 0.2 over many frames is a thing the detector
 * keeps seeing (the cake in the birthday clip). Measured here: not adopted (see the note at the top).
 */
const PERSIST = { minScore: 0.18, meanScore: 0.22, frames: 3 };

function promotePersistent(
  raw: RawFrame[],
  kept: FrameObjects[],
  o: Pick<ObjectsOptions, 'minScore'>,
  p = PERSIST,
): FrameObjects[] {
  const out = kept.map((f) => ({ ...f, objects: [...f.objects] }));
  const labels = new Set(
    raw.flatMap((r) =>
      r.objects
        .filter((d) => d.label !== 'person' && d.score >= p.minScore && d.score < o.minScore)
        .map((d) => d.label),
    ),
  );
  for (const label of labels) {
    let run: { i: number; d: RawDetection }[] = [];
    const flush = () => {
      const mean = run.reduce((s, x) => s + x.d.score, 0) / Math.max(1, run.length);
      if (run.length >= p.frames && mean >= p.meanScore) {
        for (const { i, d } of run)
          if (!out[i]!.objects.some((x) => x.label === label))
            out[i]!.objects.push({ ...d, weak: true } as RawDetection);
      }
      run = [];
    };
    for (let i = 0; i < raw.length; i++) {
      const r = raw[i]!;
      const prev = run.at(-1);
      if (prev && raw[prev.i]!.shot !== r.shot) flush();
      const last = run.at(-1)?.d;
      const cands = r.objects
        .filter((d) => d.label === label && d.score >= p.minScore)
        .sort((a, b) => b.score - a.score);
      const d = cands.find((c) => !last || overlap(c.box, last.box) >= 0.3);
      if (d) run.push({ i, d });
      else flush();
    }
    flush();
  }
  return out;
}

const { values } = parseArgs({ options: { interval: { type: 'string' } } });
const MEDIA = process.env.VIDQ_TEST_MEDIA ?? resolve(import.meta.dir, '../../shared/media');
type Truth = Record<string, [number, number][]>;
/** From MANIFEST.md ("What is in them"); alternatives a person would accept share a span (armchair: chair or couch). */
const TRUTH: Record<string, Truth> = {
  'birthday-no-audio.mp4': { person: [[0, 16.7]], cake: [[0, 16.7]], laptop: [[0, 16.7]] },
  'bottles.mp4': {
    bottle: [[0, 39.9]],
    person: [
      [5, 7],
      [11, 13],
      [15, 17],
      [21, 23],
      [27, 29],
      [29, 31],
      [33, 35],
    ],
  },
  'cars-parking-lot.mp4': {
    car: [
      [4, 8],
      [15, 18],
      [25, 27],
    ],
  },
  'chaplin-bw.mp4': { person: [[0, 9.6]] },
  'countdown-living-room.mp4': { person: [[0, 6.1]], tv: [[0, 6.1]], chair: [[0, 6.1]], couch: [[0, 6.1]] },
  'drummer-vertical.mp4': { person: [[0, 36.3]] },
  'grid-speakers-33s.mp4': { person: [[0, 33]] },
  'pancake.mkv': { person: [[0, 10.4]] },
  'people-one-by-one.mp4': {
    person: [
      [3, 17],
      [23, 41],
      [48, 66],
      [73, 82],
      [90, 117],
      [123, 132],
    ],
    'dining table': [[0, 139.4]],
  },
  'skateboarding-dog.mp4': { dog: [[0, 14.1]], skateboard: [[0, 14.1]] },
  'talking-head.mp4': { person: [[0, 8.1]] },
  'big-buck-bunny-intro.webm': { bird: [[16, 22]] },
};
/** Labels that stand for one thing: a hit on either covers both (the armchair). */
const SAME: Record<string, string> = { couch: 'chair', chair: 'couch' };

const work = mkdtempSync(join(tmpdir(), 'vidq-spans-'));
const bins = await resolveBinaries(join(work, 'bin'));
const analyzer = new ObjectsAnalyzer({ ...DEFAULT_OBJECTS, workers: 1 });
const interval = Number(values.interval ?? 5);
const totals = { before: { tp: 0, pred: 0, hit: 0, truth: 0 }, after: { tp: 0, pred: 0, hit: 0, truth: 0 } };

const len = (spans: [number, number][]) => spans.reduce((s, [a, b]) => s + Math.max(0, b - a), 0);
/** Seconds of `a` that `b` covers (b's spans do not overlap each other). */
const covered = (a: [number, number][], b: [number, number][]) =>
  a.reduce((s, [x, y]) => s + b.reduce((t, [p, q]) => t + Math.max(0, Math.min(y, q) - Math.max(x, p)), 0), 0);

for (const [name, truth] of Object.entries(TRUTH)) {
  const dir = join(work, name.replace(/\W/g, '_'));
  const file = join(MEDIA, name);
  const info = await probeFile(bins.ffprobe, file, { maxDurationSec: 3600 });
  const video = {
    id: 'v',
    path: file,
    dir,
    durationSec: info.durationSec,
    fps: info.fps,
    width: info.width,
    height: info.height,
    hasAudio: info.hasAudio,
  };
  const base = {
    video,
    ffmpeg: bins.ffmpeg,
    signal: new AbortController().signal,
    log: createLogger('error'),
    progress: () => {},
  };
  const vis = await new VisualAnalyzer({ ...DEFAULT_VISUAL, frameIntervalSec: interval }).run({
    ...base,
    frames: () => [],
    segments: () => [],
  });
  const frames = vis.frames!.map((f) => ({ ...f, path: join(dir, 'frames', f.file) }));
  const shots = shotBounds((vis.segments ?? []).filter((s) => s.kind === 'shot') as Segment[], info.durationSec);
  const { frames: raw } = await analyzer.detect(base, frames);
  const plain = raw.map((r) => applyThresholds(r, DEFAULT_OBJECTS));
  const row: string[] = [];
  for (const [variant, perFrame] of [
    ['before', plain],
    ['after', promotePersistent(raw, plain, DEFAULT_OBJECTS)],
  ] as const) {
    const segs = mergeSpans([...perFrame], shots, info.durationSec);
    const byLabel = new Map<string, [number, number][]>();
    for (const s of segs) byLabel.set(s.text, [...(byLabel.get(s.text) ?? []), [s.start, s.end]]);
    const t = totals[variant];
    let tp = 0;
    let pred = 0;
    for (const [label, spans] of byLabel) {
      pred += len(spans);
      const truthSpans = truth[label] ?? truth[SAME[label] ?? ''] ?? [];
      tp += covered(spans, truthSpans);
    }
    let hit = 0;
    let all = 0;
    const seen = new Set<string>();
    for (const [label, spans] of Object.entries(truth)) {
      if (SAME[label] && seen.has(SAME[label]!)) continue;
      seen.add(label);
      const mine = [...(byLabel.get(label) ?? []), ...(byLabel.get(SAME[label] ?? '') ?? [])];
      all += len(spans);
      hit += covered(spans, mine);
    }
    t.tp += tp;
    t.pred += pred;
    t.hit += hit;
    t.truth += all;
    const extra =
      variant === 'after'
        ? ` +[${[...new Set(segs.filter((s) => !mergeSpans(plain, shots, info.durationSec).some((x) => x.text === s.text && x.start === s.start)).map((s) => `${s.text} ${s.start}-${s.end}`))].join(', ')}]`
        : '';
    row.push(`${variant} P ${(tp / Math.max(pred, 1e-9)).toFixed(2)} R ${(hit / all).toFixed(2)}${extra}`);
  }
  console.log(`${name.padEnd(28)} ${String(frames.length).padStart(3)} frames | ${row.join(' | ')}`);
}
for (const [k, t] of Object.entries(totals))
  console.log(
    `TOTAL ${k}: precision ${(t.tp / t.pred).toFixed(3)} (${t.tp.toFixed(0)} of ${t.pred.toFixed(0)} s), recall ${(t.hit / t.truth).toFixed(3)} (${t.hit.toFixed(0)} of ${t.truth.toFixed(0)} s)`,
  );
analyzer.close();
rmSync(work, { recursive: true, force: true });
