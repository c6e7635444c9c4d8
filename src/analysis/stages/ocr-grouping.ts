/**
 * Text grouping for the OCR stage: a frame's recognised lines are cleaned and grouped into blocks (a
 * line and the lines stacked right under it in the same size, like "THE PEACH OPEN MOVIE PROJECT /
 * PRESENTS"), because a question is about what a caption or title says, not about one of its lines.
 * A block seen in consecutive frames with nearly the same text (OCR jitters a letter now and then)
 * becomes one `ocr` segment. Pure functions.
 */
import type { NewSegment } from '../contracts';
import type { TextLine } from '../engines/paddle-ocr';
import { restoreSpaces } from '../word-spaces';

/** [x, y, w, h] normalised to 0..1 of the frame (as the objects stage stores boxes). */
export type Box = [number, number, number, number];

/** Lines that belong together (a caption, a title, a row of words), read top to bottom. */
export interface TextBlock {
  /** Rows joined by "\n". */
  text: string;
  lines: string[];
  confidence: number;
  box: Box;
}

export interface FrameText {
  t: number;
  shot: number;
  blocks: TextBlock[];
}

/**
 * Drops what the recogniser is unsure of and strings without a letter or digit ("|", "--"), and
 * puts back the word spaces the recogniser drops between wide-set capitals and in titles.
 */
export function cleanLines(lines: TextLine[], minConfidence: number, wordSpaces = true): TextLine[] {
  return lines
    .map((l) => {
      const text = l.text.replace(/\s+/g, ' ').trim();
      return { ...l, text: wordSpaces ? restoreSpaces(text) : text };
    })
    .filter((l) => l.confidence >= minConfidence && /[\p{L}\p{N}]/u.test(l.text));
}

/**
 * Groups a frame's lines: pieces on one row with a small gap become one row (the detector may split
 * words), and rows stacked under each other with a gap under a line height, similar height and
 * overlapping horizontally become one block. Lone single characters are dropped unless they are a
 * confident digit (countdowns, scores): a table leg read as "X" is the usual kind.
 */
export function groupBlocks(lines: TextLine[], width: number, height: number): TextBlock[] {
  const h = (r: TextLine['rect']) => Math.max(1, r[3] - r[1]);
  const n = lines.length;
  const parent = lines.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  const sameRow = (a: TextLine['rect'], b: TextLine['rect']) => {
    const vOverlap = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
    const hGap = Math.max(a[0], b[0]) - Math.min(a[2], b[2]);
    return vOverlap >= 0.5 * Math.min(h(a), h(b)) && hGap <= 1.0 * Math.min(h(a), h(b));
  };
  // Rows first.
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) if (sameRow(lines[i]!.rect, lines[j]!.rect)) parent[find(j)] = find(i);
  const rowsMap = new Map<number, TextLine[]>();
  for (let i = 0; i < n; i++) {
    const r = find(i);
    const list = rowsMap.get(r) ?? [];
    list.push(lines[i]!);
    rowsMap.set(r, list);
  }
  const rows: TextLine[] = [...rowsMap.values()].map((pieces) => {
    pieces.sort((a, b) => a.rect[0] - b.rect[0]);
    return {
      text: pieces.map((p) => p.text).join(' '),
      confidence: mean(pieces.map((p) => p.confidence)),
      rect: [
        Math.min(...pieces.map((p) => p.rect[0])),
        Math.min(...pieces.map((p) => p.rect[1])),
        Math.max(...pieces.map((p) => p.rect[2])),
        Math.max(...pieces.map((p) => p.rect[3])),
      ],
    };
  });
  rows.sort((a, b) => a.rect[1] - b.rect[1] || a.rect[0] - b.rect[0]);

  // Then blocks of stacked rows.
  const stacked = (a: TextLine['rect'], b: TextLine['rect']) => {
    const [ha, hb] = [h(a), h(b)];
    if (Math.max(ha, hb) / Math.min(ha, hb) > 1.6) return false;
    const vGap = Math.max(a[1], b[1]) - Math.min(a[3], b[3]);
    const hOverlap = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
    return (
      vGap >= -0.5 * Math.min(ha, hb) &&
      vGap <= 0.8 * Math.min(ha, hb) &&
      hOverlap > 0.3 * Math.min(a[2] - a[0], b[2] - b[0])
    );
  };
  const bp = rows.map((_, i) => i);
  const bfind = (i: number): number => (bp[i] === i ? i : (bp[i] = bfind(bp[i]!)));
  for (let i = 0; i < rows.length; i++)
    for (let j = i + 1; j < rows.length; j++) if (stacked(rows[i]!.rect, rows[j]!.rect)) bp[bfind(j)] = bfind(i);
  const blocksMap = new Map<number, TextLine[]>();
  rows.forEach((r, i) => {
    const k = bfind(i);
    const list = blocksMap.get(k) ?? [];
    list.push(r);
    blocksMap.set(k, list);
  });

  const blocks: TextBlock[] = [];
  for (const members of blocksMap.values()) {
    const text = members.map((m) => m.text).join('\n');
    const confidence = mean(members.map((m) => m.confidence));
    const compact = text.replace(/\s+/g, '');
    if (compact.length === 1 && !(/\p{N}/u.test(compact) && confidence >= 0.9)) continue;
    const x0 = Math.min(...members.map((m) => m.rect[0]));
    const y0 = Math.min(...members.map((m) => m.rect[1]));
    const x1 = Math.max(...members.map((m) => m.rect[2]));
    const y1 = Math.max(...members.map((m) => m.rect[3]));
    blocks.push({
      text,
      lines: members.map((m) => m.text),
      confidence,
      box: [round4(x0 / width), round4(y0 / height), round4((x1 - x0) / width), round4((y1 - y0) / height)],
    });
  }
  return blocks;
}

/** Case- and spacing-insensitive form used to compare sightings. */
export function normalizeText(s: string): string {
  return s.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
}

/** 1 − Levenshtein distance / longer length (1 = identical). */
export function similarity(a: string, b: string): number {
  if (a === b) return 1;
  if (!a.length || !b.length) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return 1 - prev[b.length]! / Math.max(a.length, b.length);
}

/**
 * Similarity of two normalised readings, except that readings whose numbers differ are different
 * texts (a clock, a counter, a score: "132.000" → "133.000" is a change, not OCR noise). When OCR
 * split or merged a number the runs do not line up and the edit distance decides.
 */
export function sameTextScore(a: string, b: string): number {
  const da = a.match(/\d+/g) ?? [];
  const db = b.match(/\d+/g) ?? [];
  if (da.length > 0 && da.length === db.length && da.some((d, i) => d !== db[i])) return 0;
  return similarity(a, b);
}

export interface MergeOptions {
  similarity: number;
  maxHoldSec: number;
  duration: number;
  /** End of a shot by index: text does not outlive the shot its last frame is in. */
  shotEnd?: (shot: number) => number | undefined;
}

/**
 * Text blocks seen in consecutive frames with similar text become one segment: start = first frame,
 * end = last frame + the gap to the next frame (at most maxHoldSec, never past the shot's end). Its
 * text is the reading seen most often (ties: the most confident).
 */
export function mergeSightings(frames: FrameText[], o: MergeOptions): NewSegment[] {
  interface Track {
    key: string;
    first: number;
    last: number;
    readings: Map<string, { block: TextBlock; count: number; conf: number }>;
    confs: number[];
    box: [number, number, number, number];
  }
  const out: NewSegment[] = [];
  const close = (tr: Track) => {
    const f = frames[tr.last]!;
    const nextT = frames[tr.last + 1]?.t ?? Math.max(o.duration, f.t);
    let end = f.t + Math.min(Math.max(0, nextT - f.t), o.maxHoldSec);
    const shotEnd = o.shotEnd?.(f.shot);
    if (shotEnd !== undefined && shotEnd > f.t) end = Math.min(end, shotEnd);
    const best = [...tr.readings.values()].sort((a, b) => b.count - a.count || b.conf / b.count - a.conf / a.count)[0]!
      .block;
    const [x0, y0, x1, y1] = tr.box;
    out.push({
      kind: 'ocr',
      start: round3(frames[tr.first]!.t),
      end: round3(end),
      text: best.text,
      confidence: round4(mean(tr.confs)),
      extra: {
        ...(best.lines.length > 1 ? { lines: best.lines } : {}),
        box: [round4(x0), round4(y0), round4(x1 - x0), round4(y1 - y0)],
        frames: tr.last - tr.first + 1,
      },
    });
  };

  let open: Track[] = [];
  frames.forEach((f, i) => {
    const keys = f.blocks.map((b) => normalizeText(b.text));
    // Best pairs first, so two similar captions in one frame each keep their own track.
    const pairs: { b: number; t: number; s: number }[] = [];
    keys.forEach((k, b) =>
      open.forEach((tr, t) => {
        const s = sameTextScore(k, tr.key);
        if (s >= o.similarity) pairs.push({ b, t, s });
      }),
    );
    pairs.sort((a, b) => b.s - a.s);
    const usedBlocks = new Set<number>();
    const usedTracks = new Set<number>();
    const next: Track[] = [];
    for (const p of pairs) {
      if (usedBlocks.has(p.b) || usedTracks.has(p.t)) continue;
      usedBlocks.add(p.b);
      usedTracks.add(p.t);
      const tr = open[p.t]!;
      extend(tr, f.blocks[p.b]!, keys[p.b]!, i);
      next.push(tr);
    }
    open.forEach((tr, t) => usedTracks.has(t) || close(tr));
    f.blocks.forEach((block, b) => {
      if (usedBlocks.has(b)) return;
      const [x, y, w, h] = block.box;
      next.push({
        key: keys[b]!,
        first: i,
        last: i,
        readings: new Map([[block.text, { block, count: 1, conf: block.confidence }]]),
        confs: [block.confidence],
        box: [x, y, x + w, y + h],
      });
    });
    open = next;
  });
  open.forEach(close);
  // Reading order within a moment: top to bottom, left to right.
  const box = (s: NewSegment) => s.extra!.box as Box;
  return out.sort((a, b) => a.start - b.start || box(a)[1] - box(b)[1] || box(a)[0] - box(b)[0]);

  function extend(tr: Track, block: TextBlock, key: string, i: number) {
    // Compare the next frame with the latest reading, so slow drift (a counter) is followed one step at a time.
    tr.key = key;
    tr.last = i;
    tr.confs.push(block.confidence);
    const r = tr.readings.get(block.text);
    if (r) {
      r.count++;
      r.conf += block.confidence;
    } else tr.readings.set(block.text, { block, count: 1, conf: block.confidence });
    const [x, y, w, h] = block.box;
    tr.box = [Math.min(tr.box[0], x), Math.min(tr.box[1], y), Math.max(tr.box[2], x + w), Math.max(tr.box[3], y + h)];
  }
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);
const round3 = (x: number) => Math.round(x * 1000) / 1000;
const round4 = (x: number) => Math.round(x * 10000) / 10000;
