/**
 * Playback in any browser: HEVC and ProRes originals (made here with the project's ffmpeg) get an
 * H.264/AAC copy of at most 720p after their analysis; the resource's playback_src streams it and
 * Chromium's <video> shows a picture and seeks. Browser part skipped without Chromium.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseFfmpegSummary } from '../../src/media/ffmpeg-probe';
import { resolveBinaries } from '../../src/media/binaries';
import { makePlaybackCopy, PLAYBACK_FILE } from '../../src/media/playback';
import { loadConfig } from '../../src/config';
import { notePlaybackPending, playbackStep, startPlaybackCopy } from '../../src/jobs/playback-step';
import { createLogger } from '../../src/log';
import { startServer } from '../../src/server';
import { createService } from '../../src/service';
import { videos } from '../../src/storage/schema';
import { eq } from 'drizzle-orm';
import { ffmpegSync, haveChromium, insertStoredVideo, launchChromium } from '../factories';
import { clip, getJson, postJson, startTestServer } from '../helpers';

declare const document: any;

let dir: string;
let ffmpeg: string;
const made: Record<string, string> = {};

function make(name: string, args: string[]): string {
  const out = join(dir, name);
  ffmpegSync(ffmpeg, [...args, out]);
  made[name] = out;
  return out;
}
function streams(file: string) {
  const p = Bun.spawnSync([ffmpeg, '-hide_banner', '-i', file]);
  return parseFfmpegSummary(p.stderr.toString())!.streams!;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vidq-playback-'));
  ({ ffmpeg } = await resolveBinaries(join(dir, 'bin')));
  make('hevc.mkv', [
    '-t',
    '3',
    '-i',
    clip('smpte-timecode-1080p.mp4'),
    '-c:v',
    'libx265',
    '-preset',
    'ultrafast',
    '-x265-params',
    'log-level=error',
    '-c:a',
    'aac',
  ]);
  make('prores.mov', [
    '-t',
    '3',
    '-i',
    clip('chaplin-bw.mp4'),
    '-c:v',
    'prores_ks',
    '-profile:v',
    '0',
    '-c:a',
    'pcm_s16le',
  ]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the playback copy', () => {
  test('HEVC 1080p becomes H.264/AAC at 1280×720; ProRes/PCM becomes H.264/AAC at its own size', async () => {
    for (const [name, mime, size] of [
      ['hevc.mkv', 'video/x-matroska', [1280, 720]],
      ['prores.mov', 'video/quicktime', [640, 360]],
    ] as const) {
      const out = join(dir, name + '.d');
      mkdirSync(out);
      const r = await makePlaybackCopy(ffmpeg, made[name]!, out, mime);
      expect(r.kind).toBe('transcode');
      const s = streams(join(out, PLAYBACK_FILE));
      expect(s.map((x) => x.codec_name)).toEqual(['h264', 'aac']);
      expect([s[0]!.width, s[0]!.height]).toEqual([...size]);
      expect(existsSync(join(out, PLAYBACK_FILE + '.part'))).toBe(false);
    }
  });

  test('H.264/AAC in MP4 needs none; in QuickTime it is only remuxed', async () => {
    const mp4 = make('h264.mp4', ['-t', '2', '-i', clip('cars-parking-lot.mp4'), '-c', 'copy']);
    const mov = make('h264.mov', ['-t', '2', '-i', clip('cars-parking-lot.mp4'), '-c', 'copy', '-f', 'mov']);
    const a = join(dir, 'a.d');
    const b = join(dir, 'b.d');
    mkdirSync(a);
    mkdirSync(b);
    expect((await makePlaybackCopy(ffmpeg, mp4, a, 'video/mp4')).kind).toBe('none');
    expect(existsSync(join(a, PLAYBACK_FILE))).toBe(false);
    expect((await makePlaybackCopy(ffmpeg, mov, b, 'video/quicktime')).kind).toBe('remux');
    expect(streams(join(b, PLAYBACK_FILE)).map((x) => x.codec_name)).toEqual(['h264', 'aac']);
  });
});

/** The generated ProRes clip (it needs a transcoded copy) as a stored QuickTime video. */
const insertProres = (
  svc: Parameters<typeof insertStoredVideo>[0],
  place: Parameters<typeof insertStoredVideo>[1],
  id: string,
  row: Parameters<typeof insertStoredVideo>[4] = {},
) =>
  insertStoredVideo(svc, place, id, made['prores.mov']!, {
    sourceUrl: 'http://x/p.mov',
    fileName: 'p.mov',
    fileType: 'video/quicktime',
    ...row,
  });

test('the copy is made only when it leaves the free disk space uploads are held to', async () => {
  const dataDir = join(dir, 'data');
  const svc = await createService(
    loadConfig({ 'data-dir': dataDir, port: '0', 'log-level': 'error', 'analysis-workers': '0' }, {}),
  );
  try {
    const { user } = await svc.accounts.createUser('u', null);
    const { index } = await svc.indexes.findOrCreateByName(svc.catalog, user, 'p');
    const id = 'P'.repeat(32);
    insertProres(svc, { indexId: index.id, userId: user.id }, id, { status: 'ready', progress: 100 });
    const d = { catalog: svc.catalog, files: svc.files, ffmpeg, log: createLogger('error') };
    expect(await playbackStep({ ...d, minFreeBytes: 2 ** 60 }, id)).toBe(false);
    expect(existsSync(join(svc.files.videoDir(id), PLAYBACK_FILE))).toBe(false);
    expect(await playbackStep({ ...d, minFreeBytes: 0 }, id)).toBe(true);
    expect(existsSync(join(svc.files.videoDir(id), PLAYBACK_FILE))).toBe(true);
    expect((svc.db.select().from(videos).get()!.analysis as any).playback.made).toBe('transcode');
  } finally {
    svc.close();
  }
});

test('a copy made beside the analysis is published when the video is ready, and deleted when it failed', async () => {
  const dataDir = join(dir, 'data-early');
  const svc = await createService(
    loadConfig({ 'data-dir': dataDir, port: '0', 'log-level': 'error', 'analysis-workers': '0' }, {}),
  );
  try {
    const { user } = await svc.accounts.createUser('u', null);
    const { index } = await svc.indexes.findOrCreateByName(svc.catalog, user, 'p');
    const d = { catalog: svc.catalog, files: svc.files, ffmpeg, log: createLogger('error'), minFreeBytes: 0 };
    for (const [id, end] of [
      ['R'.repeat(32), 'ready'],
      ['F'.repeat(32), 'failed'],
    ] as const) {
      insertProres(svc, { indexId: index.id, userId: user.id }, id);
      const analysis = () => svc.db.select().from(videos).where(eq(videos.id, id)).get()!.analysis as any;
      expect(await notePlaybackPending(d, id)).toBe(true);
      const early = startPlaybackCopy(d, id, new AbortController().signal);
      expect(early).not.toBeNull();
      // The analysis ends while (or after) the copy is made; until then the mark says "making".
      expect(analysis().playback).toEqual({ state: 'making' });
      svc.db.update(videos).set({ status: end }).where(eq(videos.id, id)).run();
      expect(await playbackStep(d, id, undefined, early)).toBe(true);
      const copy = join(svc.files.videoDir(id), PLAYBACK_FILE);
      if (end === 'ready') {
        expect(existsSync(copy)).toBe(true);
        expect(analysis().playback).toMatchObject({ state: 'made', made: 'transcode' });
        expect(streams(copy).find((s) => s.codec_type === 'video')?.codec_name).toBe('h264');
      } else {
        expect(existsSync(copy)).toBe(false);
        expect(analysis().playback).toBeUndefined();
      }
    }
  } finally {
    svc.close();
  }
});

test('a copy cut off by a stop after `ready` is made again when the server starts', async () => {
  const dataDir = join(dir, 'data-redo');
  const config = loadConfig(
    { 'data-dir': dataDir, port: '0', 'log-level': 'error', 'analysis-workers': '0', 'min-free-bytes': '0' },
    {},
  );
  // As a stop leaves it: the video is ready, its copy was being made (the mark, half a file).
  const before = await createService(config);
  const { user, token } = await before.accounts.createUser('u', null);
  const { index } = await before.indexes.findOrCreateByName(before.catalog, user, 'p');
  const id = 'M'.repeat(32);
  insertProres(before, { indexId: index.id, userId: user.id }, id, {
    status: 'ready',
    progress: 100,
    analysis: { playback: { state: 'making' } },
  });
  const copy = join(before.files.videoDir(id), PLAYBACK_FILE);
  await Bun.write(`${copy}.part`, 'half a copy');
  before.close();

  const server = await startServer(config, () => {});
  try {
    let r: any;
    for (let i = 0; i < 200; i++) {
      r = (await getJson(server.url, `/index-resources?token=${token}&index=p`)).body[0];
      if (r.metadata?.analysis?.playback?.state !== 'making') break;
      await Bun.sleep(100);
    }
    expect(r.metadata.analysis.playback).toMatchObject({ state: 'made', made: 'transcode' });
    expect(streams(copy).find((s) => s.codec_type === 'video')?.codec_name).toBe('h264');
    expect(existsSync(`${copy}.part`)).toBe(false);
  } finally {
    await server.stop();
  }
});

describe.skipIf(!haveChromium)('HEVC and ProRes play and seek in Chromium through playback_src', () => {
  test('after analysis: playback_src shows a picture and seeks; the copy is removed with the video', async () => {
    const origin = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: (req) => new Response(Bun.file(made[new URL(req.url).pathname.slice(1)] ?? '/nonexistent')),
    });
    const srv = await startTestServer({ 'analysis-workers': '1', analyzers: 'visual' });
    const browser = await launchChromium();
    try {
      const keys: string[] = [];
      for (const name of ['hevc.mkv', 'prores.mov']) {
        const up = await postJson(srv.url, '/remote-upload', {
          token: srv.token,
          index: 'play',
          url: `http://127.0.0.1:${origin.port}/${name}`,
        });
        expect(up.status).toBe(200);
        keys.push(up.body.data.key);
      }
      let rows: any[] = [];
      for (let i = 0; i < 1200; i++) {
        rows = (await getJson(srv.url, `/index-resources?token=${srv.token}&index=play`)).body;
        // playback_src is there from the start of the analysis; the copy is there once "made".
        if (rows.length === 2 && rows.every((r) => r.metadata.analysis?.playback?.state === 'made')) break;
        await Bun.sleep(100);
      }
      expect(rows.every((r) => r.status === 'ready' && r.playback_src)).toBe(true);
      const page = await browser.newPage();
      for (const r of rows) {
        await page.setContent(`<video id="v" muted preload="auto" src="${r.playback_src}"></video>`);
        const shown = await page.evaluate(
          () =>
            new Promise<{ w: number; seeked: number }>((resolve, reject) => {
              const v = document.getElementById('v');
              v.onerror = () => reject(new Error(`media error ${v.error?.code}`));
              setTimeout(
                () =>
                  reject(new Error(`no picture after 20 s: readyState ${v.readyState}, videoWidth ${v.videoWidth}`)),
                20_000,
              );
              const seek = () => {
                v.onseeked = () => resolve({ w: v.videoWidth, seeked: v.currentTime });
                v.currentTime = 2;
              };
              // It may have loaded before this runs (setContent waits for the page's load).
              if (v.readyState >= 2) seek();
              else v.onloadeddata = seek;
            }),
        );
        expect(shown.w).toBeGreaterThan(0);
        expect(Math.abs(shown.seeked - 2)).toBeLessThan(0.5);
        // The original (still what `src` streams) is what Chromium could not show.
        await page.setContent(`<video id="v" muted preload="auto" src="${r.src}"></video>`);
        const original = await page.evaluate(
          () =>
            new Promise<number>((resolve) => {
              const v = document.getElementById('v');
              if (v.error) resolve(-1);
              if (v.readyState >= 2) resolve(v.videoWidth);
              v.onloadeddata = () => resolve(v.videoWidth);
              v.onerror = () => resolve(-1);
              setTimeout(() => resolve(v.videoWidth), 5000);
            }),
        );
        console.log(
          `${r.file_name}: the original in Chromium gives videoWidth ${original} (-1 = error); the copy ${shown.w}`,
        );
      }
      const indexId = (await getJson(srv.url, `/indexes?token=${srv.token}`)).body[0].index_id;
      const copy = join(srv.dataDir, 'media', keys[0]!, PLAYBACK_FILE);
      expect(existsSync(copy)).toBe(true);
      expect(
        (await postJson(srv.url, '/remove-from-index', { token: srv.token, project_id: indexId, video_id: keys[0] }))
          .status,
      ).toBe(200);
      expect(existsSync(copy)).toBe(false);
    } finally {
      await browser.close();
      await srv.stop();
      origin.stop();
    }
  });
});
