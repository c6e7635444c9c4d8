/**
 * A video removed while the worker has its job: its folder goes and its playback copy's ffmpeg
 * stops, however the removal meets the job. Runs the worker's job code (`analyseJob`) in this
 * process with the real pipeline, queue, removal and playback copy; two stand-ins make the timing
 * deterministic, each named where it is built:
 * - a stand-in stage that meets the removal (its files go under it, and it fails because of that,
 *   before the pipeline's progress report sees the removal: the race a full CI run hit);
 * - a stand-in ffmpeg whose playback copy is slow (it writes its file, then takes 120 s); every
 *   other call goes to the real ffmpeg.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import type { Analyzer } from '../../src/analysis/contracts';
import { loadConfig } from '../../src/config';
import { analyseJob } from '../../src/jobs/analyse-job';
import { createLogger } from '../../src/log';
import { resolveBinaries } from '../../src/media/binaries';
import { createService } from '../../src/service';
import { jobs, videos } from '../../src/storage/schema';
import { ffmpegSync, insertStoredVideo } from '../factories';

let dir: string;
let realFfmpeg: string;
/** MPEG-4 Part 2 in MP4: needs a transcoded playback copy. */
let source: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vidq-removal-'));
  ({ ffmpeg: realFfmpeg } = await resolveBinaries(join(dir, 'bin')));
  source = join(dir, 'mpeg4.mp4');
  ffmpegSync(realFfmpeg, ['-f', 'lavfi', '-i', 'testsrc=s=320x240:r=10', '-t', '2', '-c:v', 'mpeg4', source]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Stand-in for ffmpeg: the playback copy's run writes a little of its file and then takes 120 s. */
function slowCopyFfmpeg(name: string): { path: string; pidFile: string } {
  const path = join(dir, `${name}-slow-copy-ffmpeg.sh`);
  const pidFile = join(dir, `${name}-copy.pid`);
  writeFileSync(
    path,
    `#!/bin/sh
case " $* " in
  *" -movflags "*)
    for last; do :; done
    printf 'partial' > "$last"
    echo $$ > '${pidFile}'
    exec sleep 120 ;;
esac
exec '${realFfmpeg}' "$@"
`,
  );
  chmodSync(path, 0o755);
  return { path, pidFile };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: Timer | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A server's data (no HTTP, no worker process) with one stored video waiting for analysis. */
async function setUp(name: string) {
  const svc = await createService(
    loadConfig(
      {
        'data-dir': join(dir, name),
        port: '0',
        'log-level': 'error',
        'min-free-bytes': '0',
        'analysis-workers': '0',
      },
      {},
    ),
  );
  const { user } = await svc.accounts.createUser('u', null);
  const { index } = await svc.indexes.findOrCreateByName(svc.catalog, user, 'p');
  const id = `${name.replace(/[^A-Za-z0-9]/g, '').padEnd(32, 'x')}`.slice(0, 32);
  insertStoredVideo(svc, { indexId: index.id, userId: user.id }, id, source, {
    fileType: 'video/mp4',
    durationSec: 2,
    fps: 10,
    width: 320,
    height: 240,
    videoCodec: 'mpeg4',
    hasAudio: false,
  });
  const now = new Date();
  await svc.queue.enqueue(id, now);
  const job = (await svc.queue.claim('w_test', now))!;
  expect(job.videoId).toBe(id);
  /** The user's removal, as /remove-from-index does it: rows, then the folder. */
  const remove = () => svc.ingest.deleteVideos(user.id, index.id, [id]);
  return { svc, id, job, remove, videoDir: svc.files.videoDir(id) };
}

function stage(run: Analyzer['run']): Analyzer {
  return { stage: 'analyzing:stand-in', kinds: ['shot'], info: { kind: 'shots', name: 'stand-in' }, weight: 1, run };
}

for (const early of [true, false]) {
  const when = early ? 'beside the analysis' : 'after the analysis';

  test(`copy ${when}: a stage that fails because the removal took its files leaves no folder and no copy running`, async () => {
    const { svc, id, job, remove, videoDir } = await setUp(`failed-${early}`);
    const ffmpeg = slowCopyFfmpeg(`failed-${early}`);
    try {
      // Stand-in stage: the removal lands while it works; a frame it had in hand is written after
      // it (the folder comes back), then it fails on a file that is gone, all before the
      // pipeline's next progress report could see the removal.
      const removedUnderIt = stage(async (ctx) => {
        // With the copy beside the analysis: removed while the copy's ffmpeg is writing.
        if (early) while (!existsSync(ffmpeg.pidFile)) await Bun.sleep(10);
        await remove();
        mkdirSync(join(ctx.video.dir, 'frames'), { recursive: true });
        writeFileSync(join(ctx.video.dir, 'frames', '000001.jpg'), 'late frame');
        readdirSync(join(ctx.video.dir, 'probes'));
        return {};
      });
      const outcome = await within(
        analyseJob(job, 'w_test', {
          config: svc.config,
          catalog: svc.catalog,
          queue: svc.queue,
          files: svc.files,
          analyzers: [removedUnderIt],
          ffmpeg: ffmpeg.path,
          log: createLogger('error'),
          onChange: () => {},
          stop: new AbortController().signal,
          earlyPlaybackCopy: early,
        }),
        20_000,
        'the job',
      );
      expect(existsSync(videoDir)).toBe(false);
      expect(outcome).toBe('cancelled');
      expect(svc.db.select().from(jobs).where(eq(jobs.videoId, id)).get()).toBeUndefined();
      if (early) expect(alive(Number(readFileSync(ffmpeg.pidFile, 'utf8')))).toBe(false);
    } finally {
      svc.close();
    }
  }, 30_000);

  test(`copy ${when}: a video removed once ready, while its copy is still made, stops the copy at once and leaves no folder`, async () => {
    const { svc, job, remove, videoDir } = await setUp(`ready-${early}`);
    const ffmpeg = slowCopyFfmpeg(`ready-${early}`);
    try {
      const done = analyseJob(job, 'w_test', {
        config: svc.config,
        catalog: svc.catalog,
        queue: svc.queue,
        files: svc.files,
        analyzers: [stage(async () => ({}))],
        ffmpeg: ffmpeg.path,
        log: createLogger('error'),
        onChange: () => {},
        stop: new AbortController().signal,
        earlyPlaybackCopy: early,
      });
      const status = () => svc.db.select().from(videos).where(eq(videos.id, job.videoId)).get()?.status;
      const deadline = Date.now() + 20_000;
      while ((status() !== 'ready' || !existsSync(ffmpeg.pidFile)) && Date.now() < deadline) await Bun.sleep(20);
      expect(status()).toBe('ready');
      const pid = Number(readFileSync(ffmpeg.pidFile, 'utf8'));
      expect(alive(pid)).toBe(true);
      const t0 = performance.now();
      await remove();
      // The stand-in copy would take 120 s: the job must stop it, not wait for it.
      await within(done, 10_000, 'the job after the removal');
      console.log(`copy ${when}: job over ${(performance.now() - t0).toFixed(0)} ms after the removal`);
      expect(alive(pid)).toBe(false);
      expect(existsSync(videoDir)).toBe(false);
    } finally {
      svc.close();
    }
  }, 40_000);
}
