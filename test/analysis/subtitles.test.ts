/**
 * Subtitles that come with a video: text tracks of every format in every container (made here
 * with the project's ffmpeg from a shared clip and the GRID transcript), bitmap tracks listed,
 * and `subtitles_url` through POST /remote-upload up to an answer of /inquire.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StageContext } from '../../src/analysis/contracts';
import { SubtitlesAnalyzer } from '../../src/analysis/stages/subtitles';
import { resolveBinaries } from '../../src/media/binaries';
import { parseSrt, readCues, subtitleTracks } from '../../src/media/subtitles';
import { clip, getJson, leftovers, postJson, startTestServer, type TestServer } from '../helpers';
import { stageContext, waitVideoReady } from '../factories';

const work = mkdtempSync(join(tmpdir(), 'vidq-subs-'));
let ffmpeg = '';
let ffprobe = '';
/** The GRID transcript as cues: each sentence from its clip's start + 0.25 s, for 2.5 s. */
let cues: { start: number; end: number; text: string }[] = [];

const srtTime = (t: number) => {
  const ms = Math.round(t * 1000);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(Math.floor(ms / 3_600_000))}:${p(Math.floor(ms / 60_000) % 60)}:${p(Math.floor(ms / 1000) % 60)},${p(ms % 1000, 3)}`;
};

function sh(args: string[]) {
  const r = Bun.spawnSync(args, { stderr: 'pipe' });
  if (r.exitCode !== 0) throw new Error(`${args.join(' ')}: ${r.stderr.toString()}`);
}

beforeAll(async () => {
  ({ ffmpeg, ffprobe } = await resolveBinaries(join(work, 'bin')));
  const tsv = readFileSync(clip('grid-speakers-33s.transcript.tsv'), 'utf8').trim().split('\n').slice(1);
  cues = tsv.map((l) => {
    const [, start, text] = l.split('\t');
    return { start: Number(start) + 0.25, end: Number(start) + 2.75, text: text!.trim() };
  });
  writeFileSync(
    join(work, 'grid.srt'),
    cues.map((c, i) => `${i + 1}\n${srtTime(c.start)} --> ${srtTime(c.end)}\n${c.text}\n`).join('\n'),
  );
  sh([ffmpeg, '-y', '-loglevel', 'error', '-i', join(work, 'grid.srt'), join(work, 'grid.vtt')]);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

function ctx(path: string, dir = work): StageContext {
  const video = { id: 'v', path, dir, durationSec: 33, fps: 25, width: 360, height: 288, hasAudio: true };
  return stageContext({ video, ffmpeg });
}

const analyzer = () => new SubtitlesAnalyzer(async () => ffprobe);

// Every text format ffmpeg writes into the containers that hold it.
const CASES = [
  { container: 'mkv', codec: 'srt', probed: 'subrip', video: 'grid-speakers-33s.mp4' },
  { container: 'mkv', codec: 'ass', probed: 'ass', video: 'grid-speakers-33s.mp4' },
  { container: 'mkv', codec: 'webvtt', probed: 'webvtt', video: 'grid-speakers-33s.mp4' },
  { container: 'mp4', codec: 'mov_text', probed: 'mov_text', video: 'grid-speakers-33s.mp4' },
  { container: 'mov', codec: 'mov_text', probed: 'mov_text', video: 'grid-speakers-33s.mp4' },
  // WebM holds VP8/VP9 video only: the Big Buck Bunny clip, with the GRID cues.
  { container: 'webm', codec: 'webvtt', probed: 'webvtt', video: 'big-buck-bunny-intro.webm' },
] as const;

describe('embedded text subtitle tracks', () => {
  for (const c of CASES) {
    test(`${c.codec} in ${c.container}: every cue with its exact time, text, language and source`, async () => {
      const out = join(work, `grid-${c.codec}.${c.container}`);
      sh([
        ffmpeg,
        '-y',
        '-loglevel',
        'error',
        '-i',
        clip(c.video),
        '-i',
        join(work, 'grid.srt'),
        '-map',
        '0:v',
        '-map',
        '1:s',
        '-c:v',
        'copy',
        '-c:s',
        c.codec,
        '-metadata:s:s:0',
        'language=eng',
        '-metadata:s:s:0',
        'title=English (GRID)',
        out,
      ]);
      const { segments, summary } = await analyzer().read(ctx(out));
      expect(summary.tracks).toEqual([
        expect.objectContaining({ codec: c.probed, language: 'eng', read: true, cues: cues.length }),
      ]);
      expect(segments.map((s) => s.text)).toEqual(cues.map((q) => q.text));
      segments.forEach((s, i) => {
        expect(s.kind).toBe('transcript');
        // ASS keeps centiseconds, the others milliseconds: these times are exact in both. The WebM
        // file is 3 ms off: its muxer moved everything by the source video's 3 ms start time.
        const digits = c.container === 'webm' ? 2 : 3;
        expect(s.start).toBeCloseTo(cues[i]!.start, digits);
        expect(s.end).toBeCloseTo(cues[i]!.end, digits);
        expect(s.extra).toMatchObject({ source: 'subtitles', language: 'eng', codec: c.probed });
      });
      if (c.container === 'mkv') expect(segments[0]!.extra!.title).toBe('English (GRID)');
    }, 60_000);
  }

  test('a video without subtitle tracks gives no segments and an empty track list', async () => {
    const { segments, summary } = await analyzer().read(ctx(clip('bottles.mp4')));
    expect(segments).toEqual([]);
    expect(summary.tracks).toEqual([]);
  });

  test('two tracks in two languages are both read, each marked with its own', async () => {
    const out = join(work, 'two.mkv');
    writeFileSync(join(work, 'de.srt'), '1\n00:00:01,000 --> 00:00:02,500\nGuten Tag\n');
    sh([
      ffmpeg,
      '-y',
      '-loglevel',
      'error',
      '-i',
      clip('grid-speakers-33s.mp4'),
      '-i',
      join(work, 'grid.srt'),
      '-i',
      join(work, 'de.srt'),
      '-map',
      '0:v',
      '-map',
      '1:s',
      '-map',
      '2:s',
      '-c:v',
      'copy',
      '-c:s',
      'srt',
      '-metadata:s:s:0',
      'language=eng',
      '-metadata:s:s:1',
      'language=ger',
      out,
    ]);
    const { segments } = await analyzer().read(ctx(out));
    expect(segments.filter((s) => s.extra!.language === 'ger').map((s) => s.text)).toEqual(['Guten Tag']);
    expect(segments.filter((s) => s.extra!.language === 'eng')).toHaveLength(cues.length);
  }, 60_000);
});

describe('subtitle files and bitmap tracks', () => {
  test('.srt and .vtt files read to the same cues', async () => {
    for (const f of ['grid.srt', 'grid.vtt']) {
      const got = await readCues(ffmpeg, join(work, f), undefined);
      expect(got.map((c) => c.text)).toEqual(cues.map((c) => c.text));
      got.forEach((c, i) => expect(c.start).toBeCloseTo(cues[i]!.start, 3));
    }
  });

  test('bitmap tracks (PGS, DVB, DVD) are listed as not read; text tracks as read; mp4 handler names are no title', () => {
    const tracks = subtitleTracks([
      { index: 0, codec_type: 'video', codec_name: 'h264' },
      { index: 2, codec_type: 'subtitle', codec_name: 'hdmv_pgs_subtitle', tags: { language: 'fre' } },
      { index: 3, codec_type: 'subtitle', codec_name: 'dvb_subtitle' },
      { index: 4, codec_type: 'subtitle', codec_name: 'dvd_subtitle', tags: { language: 'und' } },
      {
        index: 5,
        codec_type: 'subtitle',
        codec_name: 'mov_text',
        tags: { language: 'eng', handler_name: 'SubtitleHandler' },
      },
    ]);
    expect(tracks).toEqual([
      { index: 2, codec: 'hdmv_pgs_subtitle', language: 'fre', text: false },
      { index: 3, codec: 'dvb_subtitle', text: false },
      { index: 4, codec: 'dvd_subtitle', text: false },
      { index: 5, codec: 'mov_text', language: 'eng', text: true },
    ]);
  });

  test('SubRip markup and ASS overrides are dropped; cues without times are skipped', () => {
    const got = parseSrt(
      '1\n00:00:01,500 --> 00:00:03,000\n<i>Hello</i> {\\an8}there\nsecond line\n\nbroken\n\n2\n00:01:02.25 --> 00:01:04.5\n<font color="red">Bye</font>\n',
    );
    expect(got).toEqual([
      { start: 1.5, end: 3, text: 'Hello there second line' },
      { start: 62.25, end: 64.5, text: 'Bye' },
    ]);
  });
});

describe('subtitles_url through the API', () => {
  let srv: TestServer;
  let origin: ReturnType<typeof Bun.serve>;
  let base = '';
  beforeAll(async () => {
    // The video and its subtitles from a real HTTP server on 127.0.0.1.
    origin = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch(req) {
        const p = new URL(req.url).pathname;
        if (p === '/grid.mp4') return new Response(Bun.file(clip('grid-speakers-33s.mp4')));
        if (p === '/grid.vtt') return new Response(Bun.file(join(work, 'grid.vtt')));
        if (p === '/grid.srt') return new Response(Bun.file(join(work, 'grid.srt')));
        if (p === '/page.vtt') return new Response('<html>not found</html>');
        return new Response('no', { status: 404 });
      },
    });
    base = `http://127.0.0.1:${origin.port}`;
    srv = await startTestServer({ 'analysis-workers': '1', analyzers: 'visual,subtitles' });
  });
  afterAll(async () => {
    await srv.stop();
    origin.stop(true);
  });

  const waitReady = (key: string) => waitVideoReady(srv, 'subs', key);

  test('a .vtt next to the video becomes its transcript: "what is said" is answered with the exact words and times', async () => {
    const up = await postJson(srv.url, '/remote-upload', {
      token: srv.token,
      index: 'subs',
      url: `${base}/grid.mp4`,
      subtitles_url: `${base}/grid.vtt`,
    });
    expect(up.status).toBe(200);
    const v = await waitReady(up.body.data.key);
    expect(v.metadata.analysis.subtitles).toMatchObject({
      tracks: [],
      file: { name: 'subtitles.vtt', cues: cues.length },
      segments: cues.length,
    });
    const a = await postJson(srv.url, '/inquire', {
      token: srv.token,
      index: (await getJson(srv.url, `/indexes?token=${srv.token}`)).body[0].index_id,
      prompt: 'What is said at this moment?',
      target_video: up.body.data.key,
      target: '0:18',
    });
    if (a.status !== 200) throw new Error(JSON.stringify(a.body));
    const said = cues.find((c) => c.start > 18 && c.start < 19)!;
    expect(a.body.output).toContain(said.text);
    // Quoted with its time.
    expect(a.body.output).toContain('0:18');
    // The timeline's data: the web page puts transcript segments in its speech lane.
    const tl = await getJson(srv.url, `/videos/${up.body.data.key}/segments?token=${srv.token}`);
    expect(tl.body.segments.filter((x: any) => x.kind === 'transcript').map((x: any) => x.text)).toEqual(
      cues.map((c) => c.text),
    );
    const cited = a.body.evidence.find((e: any) => e.kind === 'transcript' && e.text === said.text);
    expect(cited).toBeDefined();
    expect(cited.start).toBeCloseTo(said.start, 3);
  }, 120_000);

  test('bad subtitles_url values are refused before anything is fetched; a non-subtitle answer fails the upload whole', async () => {
    for (const [subtitles_url, status] of [
      ['ftp://127.0.0.1/a.vtt', 400],
      [`${base}/grid.txt`, 400],
      [42, 400],
      ['not a url', 400],
    ] as const) {
      const r = await postJson(srv.url, '/remote-upload', {
        token: srv.token,
        index: 'subs',
        url: `${base}/grid.mp4`,
        subtitles_url,
      });
      expect(r.status).toBe(status);
      expect(r.body).toMatchObject({ error: status, message: expect.stringContaining('subtitles_url') });
    }
    const before = ((await getJson(srv.url, `/index-resources?token=${srv.token}&index=subs`)).body as any[]).length;
    const r = await postJson(srv.url, '/remote-upload', {
      token: srv.token,
      index: 'subs',
      url: `${base}/grid.mp4`,
      subtitles_url: `${base}/page.vtt`,
    });
    expect(r.status).toBe(422);
    expect(((await getJson(srv.url, `/index-resources?token=${srv.token}&index=subs`)).body as any[]).length).toBe(
      before,
    );
    expect(leftovers(srv.dataDir).tmp).toEqual([]);
  }, 60_000);

  test('private addresses are refused for subtitles_url as for url when not allowed', async () => {
    const strict = await startTestServer({ 'allow-private-urls': false });
    try {
      const r = await postJson(strict.url, '/remote-upload', {
        token: strict.token,
        index: 'x',
        url: 'http://93.184.216.34/a.mp4',
        subtitles_url: `${base}/grid.vtt`,
      });
      expect(r.status).toBe(403);
    } finally {
      await strict.stop();
    }
  });
});
