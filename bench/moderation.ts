/**
 * bench/moderation: how the local content-moderation model (nsfwjs MobileNetV2 via
 * src/flows/moderation.ts, the code behind POST /core/content-moderation) judges frames we have.
 *
 *   bun bench/moderation.ts [--every 3]
 *
 * Frames: one every `--every` seconds of each video clip in the shared test media (all of them
 * safe: people, rooms, animals, cartoons, colour bars), plus a few pictures made here (flat skin
 * tones, a skin-tone gradient, noise) that probe the classifier's known weakness for skin-coloured
 * areas. We have no unsafe frames and download none, so only the false-flag side is measured.
 * Reports per source: frames, the class most often on top, the highest Porn/Hentai/Sexy
 * probability seen, how many frames would be flagged at FLAG_PROBABILITY, and ms per frame.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { FLAG_PROBABILITY, Moderator } from '../src/flows/moderation';
import { resolveBinaries } from '../src/media/binaries';
import { MEDIA_DIR } from '../test/helpers';

const every = Number(process.argv[process.argv.indexOf('--every') + 1]) || 3;
const work = mkdtempSync(join(tmpdir(), 'vidq-bench-moderation-'));
const { ffmpeg } = await resolveBinaries(join(work, 'bin'));
const m = new Moderator({ vision: null });
const UNSAFE = ['Porn', 'Hentai', 'Sexy'];

async function judge(name: string, inputs: (string | Buffer)[]) {
  const tops = new Map<string, number>();
  let worst = { p: 0, c: '' };
  let flagged = 0;
  const t0 = performance.now();
  for (const f of inputs) {
    const classes = await m.classify(f);
    const top = Object.entries(classes).sort((a, b) => b[1] - a[1])[0]![0];
    tops.set(top, (tops.get(top) ?? 0) + 1);
    const u = UNSAFE.map((c) => ({ c, p: classes[c] ?? 0 })).sort((a, b) => b.p - a.p)[0]!;
    if (u.p > worst.p) worst = u;
    if (u.p >= FLAG_PROBABILITY) flagged++;
  }
  const ms = Math.round((performance.now() - t0) / Math.max(1, inputs.length));
  const mostly = [...tops.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([c, n]) => `${c} ${n}`)
    .join(', ');
  console.log(`| ${name} | ${inputs.length} | ${mostly} | ${worst.c} ${worst.p.toFixed(2)} | ${flagged} | ${ms} |`);
  return { frames: inputs.length, flagged };
}

await m.classify(
  await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } })
    .png()
    .toBuffer(),
);
console.log(`flag at ≥ ${FLAG_PROBABILITY} (any of ${UNSAFE.join(', ')}); one frame every ${every} s\n`);
console.log('| source | frames | top class (frames) | highest unsafe p | flagged | ms/frame |');
console.log('|---|---|---|---|---|---|');
let total = 0;
let flaggedTotal = 0;
for (const name of readdirSync(MEDIA_DIR)
  .filter((n) => /\.(mp4|webm|mkv)$/.test(n))
  .sort()) {
  const dir = join(work, name);
  await Bun.spawn([ffmpeg, '-v', 'error', '-i', join(MEDIA_DIR, name), '-vf', `fps=1/${every}`, `${dir}-%04d.jpg`])
    .exited;
  const frames = readdirSync(work)
    .filter((f) => f.startsWith(`${name}-`))
    .map((f) => join(work, f));
  const r = await judge(name, frames);
  total += r.frames;
  flaggedTotal += r.flagged;
}
const flat = (hex: string) =>
  sharp({ create: { width: 640, height: 360, channels: 3, background: hex } })
    .jpeg()
    .toBuffer();
const gradient = await sharp(
  Buffer.from(
    Array.from({ length: 360 * 640 }, (_, i) => [
      255 - ((i % 640) >> 3),
      200 - ((i % 640) >> 2),
      160 - ((i % 640) >> 2),
    ]).flat(),
  ),
  { raw: { width: 640, height: 360, channels: 3 } },
)
  .jpeg()
  .toBuffer();
const noise = await sharp(Buffer.from(Array.from({ length: 360 * 640 * 3 }, () => Math.floor(Math.random() * 256))), {
  raw: { width: 640, height: 360, channels: 3 },
})
  .jpeg()
  .toBuffer();
const made = await judge('made here: skin tones #e0ac69, #c68642, #8d5524, #f1c27d', [
  await flat('#e0ac69'),
  await flat('#c68642'),
  await flat('#8d5524'),
  await flat('#f1c27d'),
]);
const made2 = await judge('made here: skin-tone gradient, noise', [gradient, noise]);
console.log(
  `\nsafe frames flagged: ${flaggedTotal} of ${total} video frames; ${made.flagged + made2.flagged} of ${made.frames + made2.frames} made pictures`,
);
m.close();
rmSync(work, { recursive: true, force: true });
