/**
 * The one ffmpeg runner (src/media/ffmpeg.ts), with the real ffmpeg: its preamble, a stop by abort
 * or timeout, the one-line summary of a failure, killing what still runs; and no other file of the
 * server starts ffmpeg or ffprobe itself.
 */
import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { resolveBinaries } from '../../src/media/binaries';
import { killRunningFfmpeg, runFfmpeg, startFfmpeg, summarizeFfmpegError } from '../../src/media/ffmpeg';

const dir = mkdtempSync(join(tmpdir(), 'vidq-runner-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const tools = () => resolveBinaries(join(dir, 'bin'));

/** An input that never ends: a test picture, generated for as long as ffmpeg runs. */
const ENDLESS = ['-re', '-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=5', '-f', 'null', '-'];

test('a run gets the preamble: no banner, and only errors on stderr unless info is asked for', async () => {
  const { ffmpeg } = await tools();
  const input = ['-f', 'lavfi', '-i', 'testsrc=duration=0.2:size=32x32', '-f', 'null', '-'];
  const quiet = await runFfmpeg(ffmpeg, input);
  expect(quiet.code).toBe(0);
  expect(quiet.err).toBe('');
  const info = await runFfmpeg(ffmpeg, input, { logLevel: 'info' });
  expect(info.code).toBe(0);
  expect(info.err).toContain('Input #0, lavfi');
  expect(info.err).not.toContain('ffmpeg version');
});

test('stdout comes back as bytes; a failure is summed up in its last line, without the "[demuxer @ 0x…]" prefix', async () => {
  const { ffmpeg } = await tools();
  const png = await runFfmpeg(
    ffmpeg,
    ['-f', 'lavfi', '-i', 'color=red:size=8x8', '-frames:v', '1', '-f', 'image2pipe', '-c:v', 'png', 'pipe:1'],
    { stdout: 'pipe' },
  );
  expect(png.code).toBe(0);
  expect([...png.out.subarray(1, 4)]).toEqual([0x50, 0x4e, 0x47]); // "PNG"

  const junk = join(dir, 'junk.mp4');
  writeFileSync(junk, 'not a video at all');
  const bad = await runFfmpeg(ffmpeg, ['-i', junk, '-f', 'null', '-']);
  expect(bad.code).not.toBe(0);
  expect(bad.signal).toBeNull();
  const summary = summarizeFfmpegError(bad.err);
  expect(summary).toContain('Invalid data found when processing input');
  expect(summary).not.toMatch(/^\[/);
  expect(summary.length).toBeLessThanOrEqual(200);
  expect(summarizeFfmpegError('', 'ffmpeg exited with 1')).toBe('ffmpeg exited with 1');
  expect(summarizeFfmpegError('a\n[mov,mp4 @ 0x55d0] moov atom not found\n\n')).toBe('moov atom not found');
});

test('an abort kills the process with the asked signal', async () => {
  const { ffmpeg } = await tools();
  const stop = new AbortController();
  const t0 = performance.now();
  const run = runFfmpeg(ffmpeg, ENDLESS, { signal: stop.signal, killSignal: 'SIGKILL' });
  setTimeout(() => stop.abort(), 300);
  const r = await run;
  expect(performance.now() - t0).toBeLessThan(5000);
  expect(r.signal).toBe('SIGKILL');
  expect(r.timedOut).toBe(false);
});

test('a run past its timeout is killed and says so (not as a crash)', async () => {
  const { ffmpeg } = await tools();
  const r = await runFfmpeg(ffmpeg, ENDLESS, { timeoutMs: 300 });
  expect(r.timedOut).toBe(true);
  expect(r.signal).toBeNull();
  expect(r.code).not.toBe(0);
});

test('killRunningFfmpeg kills every process still running, and only those', async () => {
  const { ffmpeg } = await tools();
  const done = startFfmpeg(ffmpeg, ['-f', 'lavfi', '-i', 'testsrc=duration=0.1', '-f', 'null', '-']);
  expect(await done.exited).toBe(0);
  const a = startFfmpeg(ffmpeg, ENDLESS);
  const b = startFfmpeg(ffmpeg, ENDLESS);
  await Bun.sleep(200);
  expect(killRunningFfmpeg()).toBe(2);
  await Promise.all([a.exited, b.exited]);
  expect([a.signalCode, b.signalCode]).toEqual(['SIGKILL', 'SIGKILL']);
  expect(done.signalCode).toBeNull();
  expect(killRunningFfmpeg()).toBe(0);
});

test('a consumer that stops reading early stops the process (stop is harmless after the end)', async () => {
  const { ffmpeg } = await tools();
  const p = startFfmpeg(ffmpeg, ['-re', '-f', 'lavfi', '-i', 'testsrc=rate=5', '-f', 'rawvideo', 'pipe:1'], {
    stdout: 'pipe',
  });
  const reader = p.stdout.getReader();
  expect((await reader.read()).done).toBe(false);
  reader.releaseLock();
  const t0 = performance.now();
  p.stop();
  // SIGTERM: ffmpeg ends its output and exits with 255 (the input alone never ends).
  expect(await p.exited).toBe(255);
  expect(performance.now() - t0).toBeLessThan(5000);
  p.stop();
  expect(p.exitCode).toBe(255);
});

test('no file of the server starts ffmpeg or ffprobe other than through the runner', () => {
  const src = resolve(import.meta.dir, '../../src');
  const files: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts')) files.push(p);
    }
  };
  walk(src);
  const spawning = files
    .filter((f) => /\bBun\.spawn(Sync)?\(|child_process/.test(readFileSync(f, 'utf8')))
    .map((f) => relative(src, f))
    .sort();
  // The runner itself, and the supervisor, which starts the analysis workers (vidq itself).
  expect(spawning).toEqual(['jobs/supervisor.ts', 'media/ffmpeg.ts']);
});
