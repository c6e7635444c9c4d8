/**
 * Hardening under faults, with real processes, real kill -9 and real ffmpeg. The server runs as a
 * child process; kills land at seeded points (VIDQ_FAULT_SEED) during a download, an analysis, a
 * removal and an index purge; after the restart the shared invariant checker (invariants.ts) must
 * find nothing wrong: among others no segment lost or duplicated, no video analysed to completion
 * twice. Then misbehaving sources (JSON and SSE uploads) and a full disk, each ending in a clear
 * error with nothing left behind.
 *
 * Both dialects (issue 33): each test runs on the SQLite file and on PostgreSQL (a fresh database
 * per data directory, `--database`; there the analysis is pg-boss's, and a killed server's jobs
 * come back when their heartbeat lapses). Two tests stay on SQLite, each saying why. The
 * PostgreSQL pass costs about as much as the SQLite one (measured: 105 s wall, 28 CPU-s of the
 * test and its servers, against 127 s and 32 CPU-s), nearly all of it in the kill -9 tests, which
 * are what it is for: the removal/purge and analysis kills are where the two catalogs differ most
 * (transactions, row locks, pg-boss's leases).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, statfsSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { createService } from '../../src/service';
import { jobs, videos } from '../../src/storage/schema';
import { clip, getJson, postJson, readEvents, startOrigin, type Origin } from '../helpers';
import { checkInvariants, openCatalogReader, type Place } from './invariants';
import { startRawOrigin, type RawOrigin } from './origin';
import { kill9, SERVER_DIALECTS, seeded, spawnServer, stopAll, stopServer, type ServerProc } from './proc';
import { until } from '../factories';

const SEED = Number(process.env.VIDQ_FAULT_SEED ?? 5);
const MAIN = join(import.meta.dir, '../../src/main.ts');
const rnd = seeded(SEED);
/** A seeded delay in [lo, hi) ms. */
const pick = (lo: number, hi: number) => Math.floor(lo + rnd() * (hi - lo));

let origin: Origin;
let raw: RawOrigin;
const dirs: string[] = [];
beforeAll(() => {
  origin = startOrigin();
  raw = startRawOrigin();
  console.log(`fault seed ${SEED} (set VIDQ_FAULT_SEED to replay another)`);
});
afterAll(async () => {
  await stopAll();
  origin.stop();
  raw.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'vidq-hard-'));
  dirs.push(d);
  return d;
}

const resources = async (s: ServerProc, index: string): Promise<any[]> => {
  const r = await getJson(s.url, `/index-resources?token=${s.token}&index=${encodeURIComponent(index)}`);
  return r.status === 200 ? r.body : [];
};
const allFinal = (rs: any[]) => rs.length > 0 && rs.every((r) => r.status === 'ready' || r.status === 'failed');
const expectHealthy = async (here: Place, settled = true) =>
  expect((await checkInvariants(here, { settled })).violations).toEqual([]);

for (const dialect of SERVER_DIALECTS)
  describe(dialect.name, () => {
    /** A data directory and its catalog on this dialect. */
    const place = async (): Promise<Place> => {
      const database = await dialect.catalog();
      return { dataDir: dataDir(), ...(database && { database }) };
    };

    describe('kill -9 of the server, then a restart', () => {
      test('during a download (a source that trickles): the resource fails with the reason, nothing is left', async () => {
        const here = await place();
        const dir = here.dataDir;
        let s = await spawnServer(dir, ['--analysis-workers', '0'], here);
        const size = statSync(clip('bottles.mp4')).size;
        // ~200 kB/s: the 505 kB body takes ~2.5 s, so the kill lands mid-body.
        const pending = postJson(s.url, '/remote-upload', {
          token: s.token,
          index: 'dl',
          url: `${raw.url}/trickle/bottles.mp4?bps=200000`,
        }).catch((e) => e);
        await until(
          () => readdirSync(join(dir, 'tmp')),
          (t) => t.length === 1,
          10_000,
          'the download to start',
        );
        await Bun.sleep(pick(100, 1200));
        const part = join(dir, 'tmp', readdirSync(join(dir, 'tmp'))[0]!);
        const before = (await resources(s, 'dl'))[0];
        await kill9(s);
        await pending;
        const got = existsSync(part) ? statSync(part).size : -1;
        console.log(`download kill: ${got} of ${size} bytes on disk, resource ${before.status}/${before.stage}`);
        expect(before.status).toBe('downloading');
        expect(got).toBeGreaterThan(0);
        expect(got).toBeLessThan(size); // mid-body

        s = await spawnServer(dir, ['--analysis-workers', '0'], here);
        const after = await resources(s, 'dl');
        expect(after).toHaveLength(1);
        expect(after[0]).toMatchObject({
          status: 'failed',
          error: expect.stringContaining('interrupted by a restart'),
        });
        await expectHealthy(here);
        // The same URL can be uploaded again and now completes.
        const again = await postJson(s.url, '/remote-upload', {
          token: s.token,
          index: 'dl',
          url: `${raw.url}/ok/bottles.mp4`,
        });
        expect(again.status).toBe(200);
        await stopServer(s);
        await expectHealthy(here);
      }, 60_000);

      test('during a signed PUT (a client that trickles the file): the resource fails with the reason, the URL is spent', async () => {
        const here = await place();
        const dir = here.dataDir;
        let s = await spawnServer(dir, ['--analysis-workers', '0'], here);
        const file = clip('bottles.mp4');
        const bytes = new Uint8Array(await Bun.file(file).arrayBuffer());
        const pre = await postJson(s.url, '/api-pre-upload', {
          filename: 'bottles.mp4',
          index: `${s.token}put`,
          duration: 39.9,
          fps: 30,
          filesize: bytes.byteLength,
          content: 'video/mp4',
        });
        expect(pre.status).toBe(200);
        const url = new URL(pre.body.url);
        // A raw socket: the head declares the whole size, the body comes 16 kB every 20 ms (~800 kB/s).
        const sock = await Bun.connect({
          hostname: url.hostname,
          port: Number(url.port),
          socket: { data() {}, error() {}, close() {} },
        });
        sock.write(
          `PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: video/mp4\r\nContent-Length: ${bytes.byteLength}\r\n\r\n`,
        );
        let sent = 0;
        const trickle = (async () => {
          while (sent < bytes.byteLength / 2) {
            sock.write(bytes.subarray(sent, sent + 16_384));
            sent += 16_384;
            await Bun.sleep(20);
          }
        })();
        await until(
          () => readdirSync(join(dir, 'tmp')),
          (t) => t.length === 1,
          10_000,
          'the upload to start',
        );
        await Bun.sleep(pick(50, 300));
        const before = (await resources(s, 'put'))[0];
        await kill9(s);
        await trickle;
        sock.end();
        console.log(
          `signed PUT kill: ${sent} of ${bytes.byteLength} bytes sent, resource ${before.status}/${before.stage}`,
        );
        expect(before).toMatchObject({ status: 'downloading', file_id: pre.body.key });
        expect(sent).toBeLessThan(bytes.byteLength);

        s = await spawnServer(dir, ['--analysis-workers', '0'], here);
        const after = await resources(s, 'put');
        expect(after).toHaveLength(1);
        expect(after[0]).toMatchObject({
          file_id: pre.body.key,
          status: 'failed',
          error: expect.stringContaining('restart'),
        });
        await expectHealthy(here);
        // The SDK's status poll says it failed (it would otherwise poll forever).
        expect((await getJson(s.url, `/status?file_id=${pre.body.key}`)).status).toBe(422);
        // The URL was used: a second PUT is refused; a new pre-upload goes through.
        const spent = await fetch(pre.body.url.replace(url.origin, s.url), {
          method: 'PUT',
          headers: { 'content-type': 'video/mp4' },
          body: bytes,
        });
        expect(spent.status).toBe(410);
        const pre2 = await postJson(s.url, '/api-pre-upload', {
          filename: 'bottles.mp4',
          index: `${s.token}put`,
          filesize: bytes.byteLength,
        });
        const ok = await fetch(pre2.body.url, { method: 'PUT', headers: { 'content-type': 'video/mp4' }, body: bytes });
        expect(ok.status).toBe(200);
        await stopServer(s);
        await expectHealthy(here);
      }, 60_000);

      test('during analysis, three times at seeded points: every job resumes and ends ready, without duplicates', async () => {
        const here = await place();
        const dir = here.dataDir;
        const args = ['--analysis-workers', '1'];
        let s = await spawnServer(dir, args, here);
        // talking-head has a face: the faces stage and its people are written under the kills too.
        for (const c of ['chaplin-bw.mp4', 'talking-head.mp4']) {
          expect(
            (await postJson(s.url, '/remote-upload', { token: s.token, index: 'an', url: `${origin.url}/media/${c}` }))
              .status,
          ).toBe(200);
        }
        const landed: string[] = [];
        for (let k = 0; k < 3; k++) {
          const rs = await until(
            () => resources(s, 'an'),
            (r) => r.some((x) => x.status === 'processing' && x.stage !== 'queued') || allFinal(r),
            60_000,
            'analysis to be under way',
          );
          if (allFinal(rs)) break;
          await Bun.sleep(pick(0, 1500));
          const at = (await resources(s, 'an')).map((x) => `${x.status}/${x.stage}@${x.progress}`).join(', ');
          const { orphans, orphanExitMs } = await kill9(s);
          landed.push(`${at} (${orphans} orphaned processes gone in ${orphanExitMs} ms)`);
          await expectHealthy(here, false); // even before recovery: nothing dangling but the work in flight
          s = await spawnServer(dir, args, here);
        }
        console.log(`analysis kills landed at:\n  ${landed.join('\n  ')}`);
        expect(landed.length).toBeGreaterThanOrEqual(1);
        const done = await until(() => resources(s, 'an'), allFinal, 120_000, 'the resumed jobs', 250);
        expect(done.map((r) => [r.file_name, r.status, r.error ?? null])).toEqual(
          expect.arrayContaining([
            ['chaplin-bw.mp4', 'ready', null],
            ['talking-head.mp4', 'ready', null],
          ]),
        );
        await stopServer(s);
        await expectHealthy(here);
        const db = await openCatalogReader(here);
        const kinds = (await db.all<{ kind: string }>('SELECT DISTINCT kind FROM segments')).map((r) => r.kind);
        const people = Number((await db.all<{ n: number }>('SELECT count(*) AS n FROM people'))[0]!.n);
        await db.close();
        expect(kinds).toEqual(expect.arrayContaining(['shot', 'object', 'face']));
        expect(people).toBe(1);
      }, 150_000);

      test('during removals and an index purge: each is done whole or not at all', async () => {
        const here = await place();
        const dir = here.dataDir;
        // Purge as soon as possible: every second, no retention.
        const args = ['--analysis-workers', '1', '--purge-after-days', '0', '--maintenance-cron', '* * * * * *'];
        let s = await spawnServer(dir, args, here);
        const clips = ['chaplin-bw.mp4', 'countdown-living-room.mp4', 'pancake.mkv'];
        const keys: Record<string, string> = {};
        for (const c of clips)
          keys[c] = (
            await postJson(s.url, '/remote-upload', { token: s.token, index: 'rm', url: `${origin.url}/media/${c}` })
          ).body.data.key;
        await postJson(s.url, '/remote-upload', {
          token: s.token,
          index: 'doomed',
          url: `${origin.url}/media/bottles.mp4`,
        });
        await postJson(s.url, '/remote-upload', {
          token: s.token,
          index: 'doomed',
          url: `${origin.url}/media/chaplin-bw.mp4`,
        });
        await until(
          async () => [...(await resources(s, 'rm')), ...(await resources(s, 'doomed'))],
          (r) => r.length === 5 && allFinal(r),
          120_000,
          'analysis',
          250,
        );
        const rmIndex = (await getJson(s.url, `/indexes?token=${s.token}`)).body.find(
          (i: any) => i.name === 'rm',
        ).index_id;
        const doomedIndex = (await getJson(s.url, `/indexes?token=${s.token}`)).body.find(
          (i: any) => i.name === 'doomed',
        ).index_id;

        // Removals: the request and a kill a few (seeded) milliseconds apart.
        const outcomes: string[] = [];
        for (const c of clips.slice(0, 2)) {
          const key = keys[c]!;
          const req = postJson(s.url, '/remove-from-index', {
            token: s.token,
            project_id: rmIndex,
            video_id: key,
          }).catch(() => null);
          await Bun.sleep(pick(2, 40));
          await kill9(s);
          const res = await req;
          const db = await openCatalogReader(here);
          const row = (await db.all('SELECT 1 FROM videos WHERE id = ?', [key])).length > 0;
          await db.close();
          const folder = existsSync(join(dir, 'media', key));
          outcomes.push(
            `${c}: answer ${res?.status ?? 'none'}, row ${row ? 'kept' : 'gone'}, folder ${folder ? 'kept' : 'gone'}`,
          );
          // Rows go first: a folder may outlive its row until recovery, never the reverse.
          if (!row) expect(res === null || res.status === 200).toBe(true);
          if (row) expect(folder).toBe(true);
          s = await spawnServer(dir, args, here);
          const listed = (await resources(s, 'rm')).find((r) => r.file_id === key);
          if (row) expect(listed).toMatchObject({ status: 'ready' });
          else {
            expect(listed).toBeUndefined();
            expect(existsSync(join(dir, 'media', key))).toBe(false);
          }
          await expectHealthy(here);
        }
        console.log(`removal kills: ${outcomes.join('; ')}`);

        // A user with a limited balance asks questions while the next kill lands.
        const cli = Bun.spawnSync([
          process.execPath,
          MAIN,
          'user',
          'create',
          '--name',
          'payer',
          '--credits',
          '40',
          '--json',
          '--data-dir',
          dir,
          ...(here.database ? ['--database', here.database] : []),
          '--log-level',
          'error',
        ]);
        expect(cli.exitCode).toBe(0);
        const payer = JSON.parse(cli.stdout.toString()) as { user_id: string; token: string };
        expect(
          (
            await postJson(s.url, '/remote-upload', {
              token: payer.token,
              index: 'paid',
              url: `${origin.url}/media/countdown-living-room.mp4`,
            })
          ).status,
        ).toBe(200);
        const paidIndex = (await getJson(s.url, `/indexes?token=${payer.token}`)).body[0].index_id;
        // One question every 25 ms (at most 60, more than the balance) until the kill.
        let killed = false;
        const asks = (async () => {
          const sent: Promise<{ status: number } | null>[] = [];
          for (let i = 0; i < 60 && !killed; i++) {
            sent.push(
              postJson(s.url, '/inquire', {
                token: payer.token,
                index: paidIndex,
                prompt: i % 2 ? 'what is on the television?' : 'how many people are there?',
              }).catch(() => null),
            );
            await Bun.sleep(25);
          }
          return Promise.all(sent);
        })();

        // Purge: soft delete, then a kill at a seeded point within the next purge tick or two.
        const del = await fetch(`${s.url}/indexes/${doomedIndex}?token=${s.token}`, { method: 'DELETE' });
        expect(del.status).toBe(200);
        await Bun.sleep(pick(0, 1500));
        await kill9(s);
        killed = true;
        const replies = await asks;
        const answered = replies.filter((r) => r?.status === 200).length;
        const db = await openCatalogReader(here);
        const idxRow = (await db.all('SELECT 1 FROM media_indexes WHERE id = ?', [doomedIndex])).length > 0;
        const rowsLeft = Number(
          (await db.all<{ n: number }>('SELECT count(*) AS n FROM videos WHERE index_id = ?', [doomedIndex]))[0]!.n,
        );
        await db.close();
        console.log(
          `purge kill: index row ${idxRow ? 'kept' : 'gone'}, ${rowsLeft} video rows left, ${readdirSync(join(dir, 'media')).length} media folders on disk`,
        );
        s = await spawnServer(dir, args, here);
        // Start-up maintenance finishes the purge.
        const all = (await getJson(s.url, `/indexes?token=${s.token}&include_deleted=true`)).body as any[];
        expect(all.map((i) => i.name)).toEqual(['rm']);
        expect((await resources(s, 'rm')).map((r) => r.file_name)).toContain('pancake.mkv');
        // The payer's video was still being analysed when the kill landed: it resumes and finishes.
        const paid = await until(
          async () => (await getJson(s.url, `/index-resources?token=${payer.token}&index=paid`)).body as any[],
          allFinal,
          60_000,
          "the payer's video",
          250,
        );
        expect(paid[0].status).toBe('ready');
        await expectHealthy(here);
        // Balance and ledger agree (the checker); every answer was paid for, none twice.
        const balance = (await checkInvariants(here)).snapshot.users.find((u) => u.id === payer.user_id)!;
        console.log(
          `questions around the kill: ${replies.length} asked, ${answered} answered, ${replies.filter((r) => r?.status === 400).length} refused (no credits), ${replies.filter((r) => r === null).length} cut off; balance ${balance.credits} of 40, ${balance.events} ledger events`,
        );
        expect(balance.credits!).toBeLessThanOrEqual(40 - answered);
        expect(balance.credits!).toBeGreaterThanOrEqual(0);
        await stopServer(s);
        await expectHealthy(here);
      }, 150_000);

      // SQLite only: the crash's leftovers are written with the SQLite tables (svc.db) behind the
      // service's back; on PostgreSQL a lost worker is pg-boss's lapsed lease (the kill -9 test above).
      if (dialect.name === 'SQLite')
        test('crash windows too narrow for a timed kill, rebuilt as the crash leaves them, recover on restart', async () => {
          const here = await place();
          const dir = here.dataDir;
          const config = loadConfig({ 'data-dir': dir, port: '0', 'log-level': 'error', 'min-free-bytes': '0' }, {});
          const svc = await createService(config);
          const { user, token } = await svc.accounts.createUser('u', null);
          const { index } = await svc.indexes.findOrCreateByName(svc.catalog, user, 'windows');
          const now = new Date();
          const base = {
            indexId: index.id,
            userId: user.id,
            sourceUrl: 'http://x/a.mp4',
            fileName: 'chaplin-bw.mp4',
            uploadedAt: now,
            updatedAt: now,
          };
          const put = (id: string) => {
            mkdirSync(join(dir, 'media', id), { recursive: true });
            copyFileSync(clip('chaplin-bw.mp4'), join(dir, 'media', id, 'source.mp4'));
          };
          // 1. Killed between the rename into media/ and the row update: the row still says downloading.
          const renamed = 'R'.repeat(32);
          svc.db
            .insert(videos)
            .values({ ...base, id: renamed, status: 'downloading', stage: 'probing', progress: 100 })
            .run();
          put(renamed);
          // 2. Killed between "stored" (processing) and queueing its analysis job.
          const unqueued = 'Q'.repeat(32);
          svc.db
            .insert(videos)
            .values({
              ...base,
              id: unqueued,
              storagePath: `media/${unqueued}/source.mp4`,
              sizeBytes: 761445,
              durationSec: 9.6,
              fps: 25,
              width: 640,
              height: 360,
              hasAudio: true,
              status: 'processing',
              stage: 'queued',
            })
            .run();
          put(unqueued);
          // 3. A job held by a worker that died with the server.
          const held = 'H'.repeat(32);
          svc.db
            .insert(videos)
            .values({
              ...base,
              id: held,
              storagePath: `media/${held}/source.mp4`,
              sizeBytes: 761445,
              durationSec: 9.6,
              fps: 25,
              width: 640,
              height: 360,
              hasAudio: true,
              status: 'processing',
              stage: 'analyzing:ocr',
            })
            .run();
          svc.db
            .insert(jobs)
            .values({
              videoId: held,
              state: 'running',
              stage: 'analyzing:visual',
              attempts: 1,
              workerId: 'w_1_x',
              createdAt: now,
              updatedAt: now,
            })
            .run();
          put(held);
          svc.close();

          const s = await spawnServer(dir, ['--analysis-workers', '1', '--analyzers', 'visual'], here);
          try {
            const rs = await until(
              async () => (await getJson(s.url, `/index-resources?token=${token}&index=windows`)).body as any[],
              (r) => r.length === 3 && allFinal(r),
              60_000,
              'recovery',
              250,
            );
            const by = Object.fromEntries(rs.map((r) => [r.file_id, r]));
            expect(by[renamed]).toMatchObject({ status: 'failed', error: expect.stringContaining('interrupted') });
            expect(existsSync(join(dir, 'media', renamed))).toBe(false);
            expect(by[unqueued]).toMatchObject({ status: 'ready' });
            expect(by[held]).toMatchObject({ status: 'ready' });
          } finally {
            await stopServer(s);
          }
          await expectHealthy(here);
        }, 90_000);
    });

    describe('misbehaving sources end in a clear error, with nothing left on disk', () => {
      let s: ServerProc;
      let here: Place;
      let dir: string;
      beforeAll(async () => {
        here = await place();
        dir = here.dataDir;
        s = await spawnServer(dir, ['--analysis-workers', '0', '--idle-timeout-ms', '700'], here);
      });
      afterAll(async () => {
        await stopServer(s);
        await expectHealthy(here);
      });

      const cases: { name: string; path: () => string; status: number; message: RegExp }[] = [
        {
          name: 'drops the connection mid-body (chunked)',
          path: () => `${raw.url}/drop/bottles.mp4`,
          status: 502,
          message: /closed the connection .*after \d+ bytes/,
        },
        {
          name: 'drops the connection mid-body (Content-Length)',
          path: () => `${raw.url}/drop-cl/bottles.mp4`,
          status: 502,
          message: /closed the connection .*after \d+ of 504961 bytes/,
        },
        {
          name: 'stalls longer than the idle timeout',
          path: () => `${raw.url}/stall/bottles.mp4`,
          status: 502,
          message: /stalled: no data for 700 ms/,
        },
        {
          name: 'sends fewer bytes than its Content-Length',
          path: () => `${raw.url}/short/bottles.mp4`,
          status: 502,
          message: /closed the connection before the end of the file, after \d+ of 570497 bytes/,
        },
        {
          name: 'sends more bytes than its Content-Length (mp4: index at the end)',
          path: () => `${raw.url}/long/bottles.mp4`,
          status: 415,
          message: /not a readable media file/,
        },
        {
          name: 'sends more bytes than its Content-Length (webm: header first)',
          path: () => `${raw.url}/long/big-buck-bunny-intro.webm`,
          status: 422,
          message: /incomplete.*ends at/,
        },
        {
          name: 'redirects in a loop',
          path: () => `${raw.url}/loop`,
          status: 502,
          message: /too many redirects \(more than 5\)/,
        },
        {
          name: 'answers 200 with an HTML error page',
          path: () => `${raw.url}/html`,
          status: 415,
          message: /not a (readable )?media file/,
        },
      ];

      for (const c of cases) {
        for (const mode of ['json', 'sse'] as const) {
          test(`${c.name} (${mode}): ${c.status}`, async () => {
            const index = `${mode}-${c.name}`.slice(0, 60);
            const before = (await checkInvariants(here)).snapshot;
            const res = await fetch(s.url + '/remote-upload', {
              method: 'POST',
              headers: {
                'content-type': 'application/json',
                accept: mode === 'sse' ? 'text/event-stream' : 'application/json',
              },
              body: JSON.stringify({ token: s.token, index, url: c.path() }),
            });
            let err: any;
            if (mode === 'json') {
              expect(res.status).toBe(c.status);
              err = await res.json();
            } else {
              // The request was accepted (the stream started), the failure arrives as the last event.
              expect(res.status).toBe(200);
              const events = await readEvents(res);
              expect(events[0].type).toBe('file_authorized');
              err = events.at(-1);
              expect(err.type).toBe('error');
              delete err.type;
            }
            expect(err).toEqual({ error: c.status, message: expect.stringMatching(c.message) });
            expect(err.message).not.toMatch(/verbose|undefined|\[object/);
            // Nothing left: no row, no index created by the failed upload, no file.
            const after = await checkInvariants(here);
            expect(after.violations).toEqual([]);
            expect(after.snapshot.videos.length).toBe(before.videos.length);
            expect(after.snapshot.indexes.length).toBe(before.indexes.length);
            expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
            expect(readdirSync(join(dir, 'media'))).toEqual([]);
          }, 20_000);
        }
      }

      test('a correct source still works after all that (the same server)', async () => {
        const r = await postJson(s.url, '/remote-upload', {
          token: s.token,
          index: 'fine',
          url: `${raw.url}/ok/big-buck-bunny-intro.webm`,
        });
        expect(r.status).toBe(200);
        expect(r.body.data.duration).toBeCloseTo(30, 0);
        await expectHealthy(here);
      }, 20_000);
    });

    describe('disk full', () => {
      test('--min-free-bytes above the free space: uploads are refused with 507 (JSON and SSE), nothing is written', async () => {
        const here = await place();
        const dir = here.dataDir;
        // Something already stored, uploaded while there was room.
        let s = await spawnServer(dir, ['--analysis-workers', '0'], here);
        expect(
          (
            await postJson(s.url, '/remote-upload', {
              token: s.token,
              index: 'full',
              url: `${origin.url}/media/chaplin-bw.mp4`,
            })
          ).status,
        ).toBe(200);
        await stopServer(s);
        s = await spawnServer(dir, ['--analysis-workers', '0', '--min-free-bytes', String(2 ** 52)], here);
        try {
          const before = (await checkInvariants(here)).snapshot;
          for (const index of ['full', 'brand-new']) {
            const json = await postJson(s.url, '/remote-upload', {
              token: s.token,
              index,
              url: `${origin.url}/media/bottles.mp4`,
            });
            expect(json).toEqual({
              status: 507,
              body: { error: 507, message: expect.stringMatching(/not enough free disk space.*free some space/) },
            });
            // Refused before any byte is fetched: a plain HTTP error even when events were asked for.
            const sse = await fetch(s.url + '/remote-upload', {
              method: 'POST',
              headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
              body: JSON.stringify({ token: s.token, index, url: `${origin.url}/media/bottles.mp4` }),
            });
            expect(sse.status).toBe(507);
            expect(await sse.json()).toMatchObject({ error: 507 });
          }
          const after = await checkInvariants(here);
          expect(after.violations).toEqual([]);
          expect(after.snapshot.videos).toEqual(before.videos);
          expect(after.snapshot.indexes).toEqual(before.indexes);
          expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
          expect(readdirSync(join(dir, 'media'))).toHaveLength(1);
          // What is stored stays readable.
          expect((await resources(s, 'full'))[0]).toMatchObject({ status: 'ready', file_name: 'chaplin-bw.mp4' });
        } finally {
          await stopServer(s);
        }
      }, 40_000);

      // SQLite only: the margin is 2.5 MiB of the disk's free space, and on PostgreSQL the server's
      // start (migrations, pg-boss's schema: WAL and tables on the same disk) eats it before the
      // download starts; what is tested is the download's accounting, which no catalog takes part in.
      if (dialect.name === 'SQLite')
        test('the disk fills up during a download: 507 by the declared size, or part-way for a chunked source; nothing is kept', async () => {
          const here = await place();
          const dir = here.dataDir;
          const free = () => {
            const st = statfsSync(dir);
            return Number(st.bavail) * Number(st.bsize);
          };
          // Room for 2.5 MiB more than is free now: the upload check passes, a 3.5 MB clip does not fit.
          const s = await spawnServer(
            dir,
            ['--analysis-workers', '0', '--min-free-bytes', String(free() - 2.5 * 2 ** 20)],
            here,
          );
          try {
            const before = (await checkInvariants(here)).snapshot;
            const declared = await postJson(s.url, '/remote-upload', {
              token: s.token,
              index: 'fill',
              url: `${raw.url}/ok/talking-head.mp4`,
            });
            expect(declared).toEqual({
              status: 507,
              body: { error: 507, message: expect.stringMatching(/the file is 3548230 bytes.*free some space/) },
            });
            const chunked = await postJson(s.url, '/remote-upload', {
              token: s.token,
              index: 'fill',
              url: `${raw.url}/chunked/talking-head.mp4`,
            });
            expect(chunked).toEqual({
              status: 507,
              body: {
                error: 507,
                message: expect.stringMatching(/disk filled up during the download.*free some space/),
              },
            });
            const after = await checkInvariants(here);
            expect(after.violations).toEqual([]);
            expect(after.snapshot.videos).toEqual(before.videos);
            expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
            expect(readdirSync(join(dir, 'media'))).toEqual([]);
          } finally {
            await stopServer(s);
          }
        }, 40_000);
    });
  });
