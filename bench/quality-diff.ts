/**
 * bench/quality-diff: what an analysis effort keeps of another's findings (issue 35), from two
 * `bench/ingest.ts --dump DIR` runs over the same clips:
 *
 *   bun bench/ingest.ts --skip-long --effort thorough --dump /tmp/thorough
 *   bun bench/ingest.ts --skip-long --effort balanced --dump /tmp/balanced
 *   bun bench/quality-diff.ts /tmp/thorough /tmp/balanced
 *
 * Checks, against the first (the reference):
 * - object label-seconds kept per label (≥ 97 %), and no label lost from a video;
 * - every distinct on-screen text kept (exactly, after case and spaces);
 * - faces grouped into the same people (every pair of reference appearances: same person in both
 *   runs or different in both), and face-seconds kept;
 * - shot boundaries unchanged; other kinds (speech, subtitles) unchanged.
 * Exits 1 when a check fails.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Dump {
  name: string;
  summaries: Record<string, Record<string, unknown>>;
  segments: { kind: string; start: number; end: number; text: string }[];
  people: { start: number; end: number; person: string }[];
}

const [refDir, candDir] = process.argv.slice(2);
if (!refDir || !candDir) {
  console.error('usage: bun bench/quality-diff.ts REFERENCE_DUMP_DIR CANDIDATE_DUMP_DIR');
  process.exit(2);
}
const load = (dir: string) =>
  new Map(
    readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => {
        const d = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Dump;
        return [d.name, d] as const;
      }),
  );
const ref = load(refDir);
const cand = load(candDir);

type Span = [number, number];
/** The spans merged into disjoint, sorted ones. */
function union(spans: Span[]): Span[] {
  const out: Span[] = [];
  for (const [a, b] of [...spans].sort((x, y) => x[0] - y[0])) {
    const last = out.at(-1);
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}
const length = (u: Span[]) => u.reduce((s, [a, b]) => s + (b - a), 0);
function overlap(u: Span[], v: Span[]): number {
  let s = 0;
  for (const [a, b] of u) for (const [c, d] of v) s += Math.max(0, Math.min(b, d) - Math.max(a, c));
  return s;
}
const spansOf = (d: Dump | undefined, kind: string, text?: string): Span[] =>
  union(
    (d?.segments ?? [])
      .filter((s) => s.kind === kind && (text === undefined || s.text === text))
      .map((s) => [s.start, s.end]),
  );
const norm = (t: string) => t.toLowerCase().replace(/\s+/g, ' ').trim();

let failures = 0;
const fail = (what: string) => {
  failures++;
  console.log(`  FAIL ${what}`);
};

// Objects: label-seconds per label, over all clips.
const perLabel = new Map<string, { ref: number; kept: number; cand: number }>();
const lost: string[] = [];
for (const [name, r] of ref) {
  const c = cand.get(name);
  if (!c) {
    fail(`${name}: missing from ${candDir}`);
    continue;
  }
  for (const label of new Set(r.segments.filter((s) => s.kind === 'object').map((s) => s.text))) {
    const u = spansOf(r, 'object', label);
    const v = spansOf(c, 'object', label);
    const t = perLabel.get(label) ?? { ref: 0, kept: 0, cand: 0 };
    t.ref += length(u);
    t.kept += overlap(u, v);
    t.cand += length(v);
    perLabel.set(label, t);
    if (!v.length) lost.push(`${name}: ${label}`);
  }
}
console.log('object label-seconds kept (reference → kept; candidate total):');
for (const [label, t] of [...perLabel].sort((a, b) => b[1].ref - a[1].ref)) {
  const pct = t.ref ? (t.kept / t.ref) * 100 : 100;
  console.log(
    `  ${label.padEnd(16)} ${t.ref.toFixed(1).padStart(7)} s → ${t.kept.toFixed(1).padStart(7)} s  ${pct.toFixed(1).padStart(5)} %  (candidate ${t.cand.toFixed(1)} s)`,
  );
  if (pct < 97) fail(`${label}: ${pct.toFixed(1)} % of its label-seconds kept (< 97 %)`);
}
for (const l of lost) fail(`label lost from a video: ${l}`);

// On-screen text: every distinct text of the reference.
let texts = 0;
let textsKept = 0;
for (const [name, r] of ref) {
  const have = new Set((cand.get(name)?.segments ?? []).filter((s) => s.kind === 'ocr').map((s) => norm(s.text)));
  for (const t of new Set(r.segments.filter((s) => s.kind === 'ocr').map((s) => norm(s.text)))) {
    texts++;
    if (have.has(t)) textsKept++;
    else fail(`${name}: on-screen text lost: ${JSON.stringify(t)}`);
  }
  const refOcr = spansOf(r, 'ocr');
  const candOcr = spansOf(cand.get(name), 'ocr');
  if (length(refOcr) && overlap(refOcr, candOcr) / length(refOcr) < 0.97)
    console.log(
      `  note ${name}: ${((overlap(refOcr, candOcr) / length(refOcr)) * 100).toFixed(1)} % of text-seconds kept`,
    );
}
console.log(`distinct on-screen texts kept: ${textsKept}/${texts}`);

// Faces: seconds kept, and the same grouping into people.
let faceRef = 0;
let faceKept = 0;
/** Every reference appearance with the person of the candidate appearance that overlaps it most. */
const pairs: { clip: string; refPerson: string; candPerson: string | null }[] = [];
for (const [name, r] of ref) {
  const c = cand.get(name);
  const u = spansOf(r, 'face');
  faceRef += length(u);
  faceKept += overlap(u, spansOf(c, 'face'));
  for (const a of r.people) {
    let best: { person: string; o: number } | null = null;
    for (const b of c?.people ?? []) {
      const o = Math.min(a.end, b.end) - Math.max(a.start, b.start);
      if (o > 0 && (!best || o > best.o)) best = { person: b.person, o };
    }
    pairs.push({ clip: name, refPerson: a.person, candPerson: best?.person ?? null });
  }
}
let agree = 0;
let pairCount = 0;
for (let i = 0; i < pairs.length; i++)
  for (let j = i + 1; j < pairs.length; j++) {
    const a = pairs[i]!;
    const b = pairs[j]!;
    pairCount++;
    const same = a.refPerson === b.refPerson;
    const sameCand = a.candPerson !== null && a.candPerson === b.candPerson;
    if (same === sameCand) agree++;
    else
      fail(
        `faces grouped differently: ${a.clip} and ${b.clip} (${same ? 'one person' : 'two people'} in the reference)`,
      );
  }
const unmatched = pairs.filter((p) => p.candPerson === null);
for (const p of unmatched) fail(`${p.clip}: a face appearance of the reference has none in the candidate`);
const people = (m: Map<string, Dump>) => new Set([...m.values()].flatMap((d) => d.people.map((p) => p.person))).size;
console.log(
  `faces: ${faceRef ? ((faceKept / faceRef) * 100).toFixed(1) : '100.0'} % of face-seconds kept (${faceKept.toFixed(1)}/${faceRef.toFixed(1)} s); appearances ${pairs.length} → ${[...cand.values()].reduce((n, d) => n + d.people.length, 0)}; people ${people(ref)} → ${people(cand)}; pairs grouped alike ${agree}/${pairCount}`,
);

// Shots and the kinds the effort does not touch.
let shotsSame = 0;
for (const [name, r] of ref) {
  const key = (d: Dump | undefined, kind: string) =>
    (d?.segments ?? [])
      .filter((s) => s.kind === kind)
      .map((s) => `${s.start.toFixed(3)}-${s.end.toFixed(3)}|${kind === 'shot' ? '' : s.text}`)
      .join(',');
  if (key(r, 'shot') === key(cand.get(name), 'shot')) shotsSame++;
  else fail(`${name}: shot boundaries differ`);
  for (const kind of ['speech', 'subtitle'])
    if (key(r, kind) !== key(cand.get(name), kind)) fail(`${name}: ${kind} segments differ`);
}
console.log(`shot boundaries unchanged in ${shotsSame}/${ref.size} clips`);

// The share of frames each stage's models read.
const share = (m: Map<string, Dump>, stage: string, key: string) => {
  let read = 0;
  let all = 0;
  for (const d of m.values()) {
    all += Number(d.summaries[stage]?.frames ?? 0);
    read += Number(d.summaries[stage]?.[key] ?? d.summaries[stage]?.frames ?? 0);
  }
  return `${read}/${all}`;
};
console.log(
  `frames the models read (reference → candidate): objects ${share(ref, 'objects', 'detected')} → ${share(cand, 'objects', 'detected')}, faces ${share(ref, 'faces', 'analysed_frames')} → ${share(cand, 'faces', 'analysed_frames')}, ocr ${share(ref, 'ocr', 'ocr_frames')} → ${share(cand, 'ocr', 'ocr_frames')}`,
);
console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
process.exit(failures ? 1 : 0);
