/**
 * Smoke test of the compiled executable: starts it like a user would (empty data directory, free
 * port, a bare environment), calls every endpoint and one error case of each, checks that the two
 * uploaded clips went through every analyzer inside the executable (models and native libraries
 * extracted from it, none reported unavailable), then stops it. Run as root where `unshare` exists,
 * it hides this checkout's node_modules from the executable (VIDQ_SMOKE_HIDE_NODE_MODULES=0: don't).
 *
 * Usage: bun scripts/smoke.ts [path/to/vidq]   (default dist/vidq)
 * The clips come from ../shared/media beside the repository (VIDQ_TEST_MEDIA overrides it); they are
 * served by an HTTP origin on 127.0.0.1, so the executable runs with --allow-private-urls.
 *
 * Prints `ok - name` / `not ok - name: reason` per check, the executable's size and cold-start time,
 * and `smoke: N passed, N failed`; exits 1 when anything failed.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dir, '..');
const exe = resolve(process.argv[2] ?? join(root, 'dist/vidq'));
const mediaDir = resolve(process.env.VIDQ_TEST_MEDIA ?? join(root, '../shared/media'));
const CLIP = 'bottles.mp4';
const CLIP2 = 'countdown-living-room.mp4';
const STATUSES = ['queued', 'downloading', 'processing', 'ready', 'failed'];
/** metadata.analysis keys of the analyzers (visual's is `shots`). */
const ANALYSIS_KINDS = ['shots', 'ocr', 'objects', 'faces', 'speech', 'subtitles', 'embeddings'];

// ---------------------------------------------------------------- checks

let passed = 0;
let failed = 0;
class Fail extends Error {}
function expect(cond: unknown, why: string): asserts cond {
  if (!cond) throw new Fail(why);
}
async function check(name: string, fn: () => unknown | Promise<unknown>): Promise<void> {
  try {
    await fn();
    passed++;
    console.log(`ok - ${name}`);
  } catch (e) {
    failed++;
    const why = e instanceof Fail ? e.message : `${(e as Error).name}: ${(e as Error).message}`;
    console.log(`not ok - ${name}: ${why.replace(/\s+/g, ' ').slice(0, 400)}`);
  }
}

// ---------------------------------------------------------------- HTTP helpers

let base = '';
interface Res {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}
async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res> {
  const init: RequestInit = { method, headers: { ...headers }, signal: AbortSignal.timeout(120_000) };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
    // A JSON client says so: /remote-upload streams events unless JSON is asked for.
    (init.headers as Record<string, string>).accept ??= 'application/json';
  }
  const r = await fetch(path.startsWith('http') ? path : base + path, init);
  const text = await r.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: r.status, headers: r.headers, text, json };
}
const get = (path: string, headers?: Record<string, string>) => call('GET', path, undefined, headers);
const post = (path: string, body: unknown, headers?: Record<string, string>) => call('POST', path, body, headers);
const q = (o: Record<string, string | undefined>) =>
  '?' +
  Object.entries(o)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(v!)}`)
    .join('&');
const show = (r: Res) => `HTTP ${r.status} ${r.text.slice(0, 200)}`;

function expectStatus(r: Res, status: number): void {
  expect(r.status === status, `expected ${status}, got ${show(r)}`);
}
/** An error response: the status and the spec's {error, message} body. */
function expectError(r: Res, status: number): void {
  expectStatus(r, status);
  expect(
    r.json && r.json.error === status && typeof r.json.message === 'string' && r.json.message.length > 0,
    `error body is not {error: ${status}, message}: ${r.text.slice(0, 200)}`,
  );
}
const isIso = (s: unknown) => typeof s === 'string' && !Number.isNaN(Date.parse(s)) && /^\d{4}-\d\d-\d\dT/.test(s);

// ---------------------------------------------------------------- the run

const dataDir = mkdtempSync(join(tmpdir(), 'vidq-smoke-'));
const home = join(dataDir, 'home'); // never the real ~/.vidq
let stdout = '';
let stderr = '';
let proc: ReturnType<typeof Bun.spawn> | undefined;
let origin: ReturnType<typeof Bun.serve> | undefined;

const nodeModules = join(root, 'node_modules');

/**
 * A command prefix that runs the executable with this checkout's node_modules hidden (an empty
 * tmpfs mounted over it in a private mount namespace), so that nothing it needs can come from
 * there, not even through a build-time path baked into the bundle; [] where that is not possible.
 * `unshare` execs the command in its own process: the pid is the executable's, signals reach it.
 */
function hideNodeModules(): string[] {
  if (process.env.VIDQ_SMOKE_HIDE_NODE_MODULES === '0' || process.getuid?.() !== 0 || !existsSync(nodeModules))
    return [];
  const unshare = Bun.which('unshare');
  if (!unshare) return [];
  const prefix = [
    unshare,
    '--mount',
    '--propagation',
    'private',
    '--',
    '/bin/sh',
    '-c',
    'mount -t tmpfs -o size=1m,mode=0555 vidq-smoke "$0" && exec "$@"',
    nodeModules,
  ];
  const probe = Bun.spawnSync([...prefix, '/bin/sh', '-c', `[ -z "$(ls -A '${nodeModules}')" ]`], {
    stdout: 'ignore',
    stderr: 'ignore',
  });
  return probe.exitCode === 0 ? prefix : [];
}

async function drain(stream: ReadableStream<Uint8Array>, onText: (s: string) => void): Promise<void> {
  const dec = new TextDecoder();
  for await (const chunk of stream) onText(dec.decode(chunk, { stream: true }));
}

async function main(): Promise<void> {
  console.log(`smoke: ${exe}`);
  if (!existsSync(exe)) {
    await check('executable exists', () => expect(false, `${exe} not found; run npm run build first`));
    return;
  }
  const sizeMb = statSync(exe).size / 1024 / 1024;
  console.log(`executable size: ${sizeMb.toFixed(1)} MB`);
  if (!existsSync(join(mediaDir, CLIP))) {
    await check('test media present', () => expect(false, `${join(mediaDir, CLIP)} missing; set VIDQ_TEST_MEDIA`));
    return;
  }

  // The origin the service downloads from.
  origin = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const name = decodeURIComponent(new URL(req.url).pathname.slice(1));
      if (!/^[\w.-]+$/.test(name) || name.startsWith('.')) return new Response('bad name', { status: 400 });
      const f = Bun.file(join(mediaDir, name));
      return (await f.exists()) ? new Response(f) : new Response('not found', { status: 404 });
    },
  });
  const src = (name: string) => `http://127.0.0.1:${origin!.port}/${name}`;

  // A bare environment: no node_modules or PATH tools to lean on, so the embedded ffprobe is used;
  // started in the (empty) data directory, and with this checkout's node_modules hidden when possible.
  const env: Record<string, string> = {
    PATH: '/usr/bin:/bin',
    HOME: home,
    VIDQ_IGNORE_SYSTEM_FFMPEG: '1',
    VIDQ_MIN_FREE_BYTES: '0',
    VIDQ_LOG_LEVEL: 'warn',
  };
  const wrap = hideNodeModules();
  console.log(
    wrap.length
      ? `node_modules hidden from the executable: ${nodeModules} (a tmpfs over it, in a private mount namespace)`
      : `node_modules not hidden from the executable (needs root and unshare): ${nodeModules}`,
  );
  const cmd = (...args: string[]) => [...wrap, exe, ...args];
  const cli = (...args: string[]) =>
    Bun.spawnSync(cmd(...args, '--data-dir', dataDir), {
      env,
      cwd: dataDir,
      stdout: 'pipe',
      stderr: 'pipe',
      timeout: 60_000,
    });

  await check('--help and --version', () => {
    const h = Bun.spawnSync(cmd('--help'), { env, cwd: dataDir, stdout: 'pipe', stderr: 'pipe' });
    expect(h.exitCode === 0 && h.stdout.toString().includes('serve'), `--help exited ${h.exitCode}: ${h.stderr}`);
    const v = Bun.spawnSync(cmd('--version'), { env, cwd: dataDir, stdout: 'pipe' });
    expect(v.exitCode === 0 && /^\d+\.\d+\.\d+/.test(v.stdout.toString().trim()), `--version printed ${v.stdout}`);
  });

  // ---- start: spawn → first successful /health is the cold start
  const t0 = performance.now();
  proc = Bun.spawn(cmd('serve', '--data-dir', dataDir, '--host', '127.0.0.1', '--port', '0', '--allow-private-urls'), {
    env,
    cwd: dataDir,
    stdout: 'pipe',
    stderr: 'pipe',
    stdin: 'ignore',
  });
  void drain(proc.stdout as ReadableStream<Uint8Array>, (s) => (stdout += s));
  void drain(proc.stderr as ReadableStream<Uint8Array>, (s) => (stderr = (stderr + s).slice(-20_000)));
  let coldMs = NaN;
  await check('serve starts and prints its address', async () => {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && proc!.exitCode === null) {
      const m = /vidq listening on (http:\/\/[^\s]+)/.exec(stdout);
      if (m) {
        base = m[1]!;
        try {
          if ((await fetch(base + '/health')).status === 200) {
            coldMs = performance.now() - t0;
            return;
          }
        } catch {
          /* not accepting yet */
        }
      }
      await Bun.sleep(5);
    }
    expect(
      false,
      `no healthy server within 30 s (exit ${proc!.exitCode}); stdout: ${stdout.slice(-500)} stderr: ${stderr.slice(-500)}`,
    );
  });
  if (Number.isFinite(coldMs)) console.log(`cold start: ${Math.round(coldMs)} ms`);
  if (!base) return;

  let defaultToken = '';
  await check('first start creates the default user: token printed once and saved 0600', () => {
    const file = join(dataDir, 'default-token.txt');
    expect(existsSync(file), 'default-token.txt missing');
    expect((statSync(file).mode & 0o777) === 0o600, `mode is ${(statSync(file).mode & 0o777).toString(8)}`);
    defaultToken = readFileSync(file, 'utf8').trim();
    expect(/^[A-Za-z0-9_-]{60}$/.test(defaultToken), 'token is not 60 URL-safe characters');
    expect(stdout.includes(defaultToken), 'the token was not printed on stdout');
  });

  await check('start-up says once which speech engine is active (and how to add transcripts when none is)', () => {
    const lines = stdout.split('\n').filter((l) => l.startsWith('Speech: '));
    expect(lines.length === 1, `${lines.length} "Speech:" lines on stdout: ${stdout.slice(-500)}`);
    expect(
      /transcribed (here|by)/.test(lines[0]!) || lines[0]!.includes('vidq models pull'),
      `the line names no engine and no command: ${lines[0]}`,
    );
  });

  await check("the API description states the server's body limit, and a larger body is a 413", async () => {
    const doc = (await get('/openapi.json')).json;
    const stated = /`--max-body-bytes` \(\d+ KiB \((\d+) bytes\) on this server/.exec(String(doc?.info?.description));
    expect(!!stated, 'the description does not state the body limit');
    const limit = Number(stated![1]);
    const big = await post('/inquire', { token: 'x', index: 'y', prompt: 'p'.repeat(limit + 100) });
    expect(big.status === 413, `a body over the stated ${limit} bytes: ${show(big)}`);
  });

  await check('GET /health', async () => {
    const r = await get('/health');
    expectStatus(r, 200);
    expect(r.json?.status === 'ok', show(r));
  });

  await check('GET /openapi.json is OpenAPI 3 with every route', async () => {
    const r = await get('/openapi.json');
    expectStatus(r, 200);
    const doc = r.json;
    expect(typeof doc?.openapi === 'string' && doc.openapi.startsWith('3.'), `openapi = ${doc?.openapi}`);
    expect(doc.info?.title && doc.info?.version, 'info.title/version missing');
    const want: [string, string][] = [
      ['/remote-upload', 'post'],
      ['/inquire', 'post'],
      ['/remove-from-index', 'post'],
      ['/indexes', 'get'],
      ['/index-resources', 'get'],
      ['/indexes/{index_id}', 'delete'],
      ['/indexes/{index_id}/restore', 'post'],
      ['/media/{file_id}', 'get'],
    ];
    const missing = want.filter(([p, m]) => !doc.paths?.[p]?.[m]).map(([p, m]) => `${m.toUpperCase()} ${p}`);
    expect(missing.length === 0, `missing: ${missing.join(', ')}`);
    const noErrors = want
      .filter(([p, m]) => !Object.keys(doc.paths[p][m].responses ?? {}).some((s) => s.startsWith('4')))
      .map(([p]) => p);
    expect(noErrors.length === 0, `no 4xx responses documented for ${noErrors.join(', ')}`);
    const ref = String(doc.paths['/inquire'].post.requestBody?.content?.['application/json']?.schema?.$ref ?? '');
    const inquire =
      JSON.stringify(doc.paths['/inquire'].post) +
      JSON.stringify(doc.components?.schemas?.[ref.split('/').pop()!] ?? {});
    expect(
      inquire.includes('minLength') && inquire.includes('prompt'),
      '/inquire does not document its fields and limits',
    );
  });

  await check('GET /swagger: HTML whose assets are local and load', async () => {
    const r = await get('/swagger');
    expectStatus(r, 200);
    expect(
      (r.headers.get('content-type') ?? '').includes('text/html'),
      `content-type ${r.headers.get('content-type')}`,
    );
    const urls = [...r.text.matchAll(/<(?:script|link)\b[^>]*?\b(?:src|href)\s*=\s*["']([^"']+)["']/gi)].map(
      (m) => m[1]!,
    );
    expect(urls.length >= 2, `expected a script and a stylesheet, found ${JSON.stringify(urls)}`);
    const remote = urls.filter((u) => /^(https?:)?\/\//i.test(u));
    expect(remote.length === 0, `remote assets: ${remote.join(', ')}`);
    expect(!/https?:\/\/(cdn|unpkg|cdnjs)\./i.test(r.text), 'the page still references a CDN');
    for (const u of urls) {
      const a = await get(new URL(u, base + '/swagger').toString());
      expect(a.status === 200 && a.text.length > 1000, `${u}: HTTP ${a.status}, ${a.text.length} bytes`);
    }
  });

  await check('GET /swagger-assets/*: bundle and stylesheet with their types; unknown is 404', async () => {
    const js = await get('/swagger-assets/swagger-ui-bundle.js');
    expect(
      js.status === 200 &&
        /javascript/.test(js.headers.get('content-type') ?? '') &&
        js.text.includes('SwaggerUIBundle'),
      `bundle: HTTP ${js.status} ${js.headers.get('content-type')}`,
    );
    const css = await get('/swagger-assets/swagger-ui.css');
    expect(
      css.status === 200 && /text\/css/.test(css.headers.get('content-type') ?? '') && css.text.includes('.swagger-ui'),
      `css: HTTP ${css.status} ${css.headers.get('content-type')}`,
    );
    expectError(await get('/swagger-assets/nope.js'), 404);
  });

  await check('unknown route is 404 {error, message}', async () => expectError(await get('/no-such-route'), 404));

  // ---- CLI against the same data directory, while the server runs
  let token = '';
  let userId = '';
  await check('CLI: user create --name smoke --credits 3 --json', () => {
    const r = cli('user', 'create', '--name', 'smoke', '--credits', '3', '--json');
    expect(r.exitCode === 0, `exit ${r.exitCode}: ${r.stderr.toString().slice(0, 300)}`);
    const out = JSON.parse(r.stdout.toString().trim().split('\n').pop()!);
    expect(typeof out.user_id === 'string' && /^[A-Za-z0-9_-]{60}$/.test(out.token), `printed ${r.stdout}`);
    userId = out.user_id;
    token = out.token;
  });
  await check('CLI: user create without --name is a usage error (exit 2)', () => {
    const r = cli('user', 'create', '--json');
    expect(r.exitCode === 2, `exit ${r.exitCode}`);
  });

  // ---- POST /remote-upload
  let key = '';
  await check('POST /remote-upload (JSON)', async () => {
    const r = await post('/remote-upload', { token, index: 'smoke-index', url: src(CLIP) });
    expectStatus(r, 200);
    const d = r.json?.data;
    expect(d && d.type === 'metadata', `no data.type "metadata": ${r.text.slice(0, 200)}`);
    expect(typeof d.fps === 'string' && Number(d.fps) > 0, `fps ${JSON.stringify(d.fps)}`);
    expect(typeof d.duration === 'number' && d.duration > 1, `duration ${d.duration}`);
    const size = statSync(join(mediaDir, CLIP)).size;
    expect(d.fileSize === `${(size / 1048576).toFixed(2)} MB`, `fileSize ${JSON.stringify(d.fileSize)}`);
    expect(d.file_size_bytes === size, `file_size_bytes ${JSON.stringify(d.file_size_bytes)}`);
    expect(typeof d.key === 'string' && d.key.length > 0 && typeof d.percentage === 'number', 'key/percentage');
    key = d.key;
  });
  await check('the embedded ffprobe was extracted into DATA_DIR/bin and used', () => {
    for (const b of ['ffprobe', 'ffmpeg']) {
      const p = join(dataDir, 'bin', b);
      expect(existsSync(p) && (statSync(p).mode & 0o111) !== 0, `${p} missing or not executable`);
    }
  });

  let key2 = '';
  await check(
    'POST /remote-upload (events, the default): file_authorized → progress… → metadata → progress → complete',
    async () => {
      const res = await fetch(base + '/remote-upload', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token, index: 'smoke-index', url: src(CLIP2) }),
        signal: AbortSignal.timeout(120_000),
      });
      expect(
        res.status === 200 && (res.headers.get('content-type') ?? '').startsWith('text/event-stream'),
        `HTTP ${res.status} ${res.headers.get('content-type')}`,
      );
      const text = await res.text();
      const events = text
        .split(/\r?\n\r?\n/)
        .map((block) =>
          block
            .split(/\r?\n/)
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trim())
            .join('\n'),
        )
        .filter(Boolean)
        .map((d) => JSON.parse(d) as { type: string; [k: string]: unknown });
      const types = events.map((e) => e.type);
      const seq = types.filter((t, i) => t !== types[i - 1]).join(' → ');
      expect(/^file_authorized( → progress)+ → metadata → progress → complete$/.test(seq), `sequence: ${seq}`);
      const meta = events.find((e) => e.type === 'metadata')!;
      const done = events.at(-1)!;
      expect(
        typeof meta.key === 'string' && meta.key === done.key && typeof meta.fps === 'string',
        'metadata/complete keys differ',
      );
      expect(
        events.filter((e) => e.type === 'progress').every((e) => typeof e.percentage === 'number'),
        'a progress event has no percentage',
      );
      key2 = meta.key as string;
    },
  );

  await check(
    'POST /remote-upload errors: 401 no token, 400 bad url, 400 missing index, 502 source 404, 415/422 not a video',
    async () => {
      expectError(await post('/remote-upload', { index: 'smoke-index', url: src(CLIP) }), 401);
      expectError(await post('/remote-upload', { token: 'x'.repeat(64), index: 'smoke-index', url: src(CLIP) }), 401);
      expectError(await post('/remote-upload', { token, index: 'smoke-index', url: 'ftp://example.com/a.mp4' }), 400);
      expectError(await post('/remote-upload', { token, url: src(CLIP) }), 400);
      expectError(await post('/remote-upload', '{not json', {}), 400);
      expectError(await post('/remote-upload', { token, index: 'smoke-index', url: src('no-such-file.mp4') }), 502);
      const nv = await post('/remote-upload', { token, index: 'smoke-index', url: src('MANIFEST.md') });
      expect(nv.status === 415 || nv.status === 422, `not a video: ${show(nv)}`);
      expectError(nv, nv.status);
      const left = (await Array.fromAsync(new Bun.Glob('*').scan({ cwd: join(dataDir, 'tmp') }))).length;
      expect(left === 0, `${left} file(s) left in DATA_DIR/tmp`);
    },
  );

  // ---- GET /indexes
  let indexId = '';
  await check('GET /indexes with a token', async () => {
    const r = await get('/indexes' + q({ token }));
    expectStatus(r, 200);
    expect(Array.isArray(r.json) && r.json.length === 1, `expected one index: ${r.text.slice(0, 200)}`);
    const i = r.json[0];
    expect(typeof i.index_id === 'string' && i.index_id.length === 64, `index_id ${i.index_id}`);
    expect(i.name === 'smoke-index' && i.count === 2 && i.deleted === false, `index ${JSON.stringify(i)}`);
    expect(
      isIso(i.created) && typeof i.total_duration === 'number' && i.total_duration > 1,
      `created/total_duration ${JSON.stringify(i)}`,
    );
    indexId = i.index_id;
  });
  await check('GET /indexes anonymous with user_id (loopback)', async () => {
    const r = await get('/indexes' + q({ user_id: userId, include_deleted: 'false' }));
    expectStatus(r, 200);
    expect(Array.isArray(r.json) && r.json.length === 1 && r.json[0].index_id === indexId, r.text.slice(0, 200));
  });
  await check(
    'GET /indexes errors: 400 no user_id, 400 bad include_deleted, 401 bad token, 403 other user, 404 unknown user',
    async () => {
      expectError(await get('/indexes'), 400);
      expectError(await get('/indexes' + q({ user_id: userId, include_deleted: 'maybe' })), 400);
      expectError(await get('/indexes' + q({ token: 'y'.repeat(64) })), 401);
      expectError(await get('/indexes' + q({ token: defaultToken, user_id: userId })), 403);
      expectError(await get('/indexes' + q({ user_id: 'u_does_not_exist' })), 404);
    },
  );

  // ---- GET /index-resources
  let srcUrl = '';
  await check('GET /index-resources by name and by index_id', async () => {
    for (const index of ['smoke-index', indexId]) {
      const r = await get('/index-resources' + q({ token, index, user_id: userId }));
      expectStatus(r, 200);
      expect(Array.isArray(r.json) && r.json.length === 2, `expected two resources: ${r.text.slice(0, 200)}`);
      for (const v of r.json) {
        expect(
          typeof v.file_name === 'string' && typeof v.file_id === 'string' && STATUSES.includes(v.status),
          `resource ${JSON.stringify(v).slice(0, 200)}`,
        );
        expect(
          isIso(v.upload_time) && typeof v.file_type === 'string' && typeof v.is_large === 'boolean',
          `resource ${JSON.stringify(v).slice(0, 200)}`,
        );
        expect(
          typeof v.metadata?.fps === 'number' && typeof v.src === 'string',
          `metadata/src ${JSON.stringify(v).slice(0, 200)}`,
        );
      }
      const ids = r.json.map((v: { file_id: string }) => v.file_id).sort();
      expect(JSON.stringify(ids) === JSON.stringify([key, key2].sort()), `file_ids ${ids} ≠ keys ${key}, ${key2}`);
      srcUrl = r.json.find((v: { file_id: string }) => v.file_id === key).src;
    }
  });
  await check(
    'GET /index-resources errors: 401 no token, 400 no index, 403 other user_id, 404 unknown index, 404 other user',
    async () => {
      expectError(await get('/index-resources' + q({ index: indexId })), 401);
      expectError(await get('/index-resources' + q({ token })), 400);
      expectError(await get('/index-resources' + q({ token, index: indexId, user_id: 'u_someone_else' })), 403);
      expectError(await get('/index-resources' + q({ token, index: 'no-such-index' })), 404);
      expectError(await get('/index-resources' + q({ token: defaultToken, index: indexId })), 404);
    },
  );

  // ---- GET src (/media/{file_id})
  await check('GET src with Range → 206 with the right bytes', async () => {
    expect(srcUrl.startsWith(base + '/media/'), `src ${srcUrl} is not a /media URL of this server`);
    const res = await fetch(srcUrl, { headers: { range: 'bytes=100-1123' } });
    const body = new Uint8Array(await res.arrayBuffer());
    const size = statSync(join(mediaDir, CLIP)).size;
    expect(res.status === 206, `HTTP ${res.status}`);
    expect(
      res.headers.get('content-range') === `bytes 100-1123/${size}`,
      `content-range ${res.headers.get('content-range')}`,
    );
    const want = new Uint8Array(readFileSync(join(mediaDir, CLIP))).subarray(100, 1124);
    expect(
      body.length === 1024 && Buffer.from(body).equals(Buffer.from(want)),
      `got ${body.length} bytes, not the file's`,
    );
    const whole = await fetch(srcUrl);
    expect(
      whole.status === 200 &&
        (await whole.arrayBuffer()).byteLength === size &&
        whole.headers.get('accept-ranges') === 'bytes',
      `whole file: HTTP ${whole.status}`,
    );
  });
  await check('GET /media errors: 401 unsigned, 403 bad signature, 416 bad range, 404 unknown file', async () => {
    const path = new URL(srcUrl).pathname;
    expectError(await get(path), 401);
    expectError(await get(srcUrl.replace(/sig=[^&]+/, 'sig=' + 'A'.repeat(43))), 403);
    const r = await fetch(srcUrl, { headers: { range: 'bytes=99999999-' } });
    expect(r.status === 416, `range past the end: HTTP ${r.status}`);
    await r.body?.cancel();
    expectError(await get('/media/' + 'Z'.repeat(32) + q({ token })), 404);
  });

  await check('the uploaded videos are analysed: status becomes ready (within 300 s)', async () => {
    const deadline = Date.now() + 300_000;
    let last = '';
    while (Date.now() < deadline) {
      // A worker that dies at start-up is restarted forever and the videos never leave `processing`.
      const crashes = stderr.split('analysis worker exited').length - 1;
      if (crashes >= 3) {
        const why = /^(?:error|\w*Error): .*$/m.exec(stderr)?.[0] ?? 'see the server stderr below';
        expect(false, `the analysis worker keeps exiting (${crashes} restarts): ${why}`);
      }
      const r = await get('/index-resources' + q({ token, index: indexId }));
      expectStatus(r, 200);
      const states = (r.json as { file_id: string; status: string; error?: string }[]).map(
        (v) => `${v.file_id}: ${v.status}${v.error ? ` (${v.error})` : ''}`,
      );
      last = states.join(', ');
      const failedOne = r.json.find((v: { status: string }) => v.status === 'failed');
      expect(!failedOne, `analysis failed: ${last}`);
      if (r.json.every((v: { status: string }) => v.status === 'ready')) return;
      await Bun.sleep(500);
    }
    expect(false, `not ready after 300 s: ${last}`);
  });

  await check(
    'every analyzer ran inside the executable (none unavailable): shots, OCR text, bottles, speech spans, embeddings',
    async () => {
      const r = await get('/index-resources' + q({ token, index: indexId }));
      expectStatus(r, 200);
      type Summary = Record<string, any>;
      const analysis = (id: string): Record<string, Summary> =>
        r.json.find((v: { file_id: string }) => v.file_id === id)?.metadata?.analysis ?? {};
      const problems: string[] = [];
      for (const [id, clip] of [
        [key, CLIP],
        [key2, CLIP2],
      ] as const) {
        const a = analysis(id);
        for (const kind of ANALYSIS_KINDS) {
          if (!a[kind]) problems.push(`${clip}: no ${kind} summary`);
          else if (a[kind].unavailable) problems.push(`${clip}: ${kind} unavailable (${a[kind].unavailable})`);
        }
      }
      expect(problems.length === 0, problems.join('; '));
      const bottles = analysis(key);
      const countdown = analysis(key2);
      expect(
        bottles.shots!.shots >= 1 && bottles.shots!.frames >= 5,
        `${CLIP} shots: ${JSON.stringify(bottles.shots)}`,
      );
      expect(bottles.objects!.labels?.bottle >= 2, `${CLIP}: no bottles seen: ${JSON.stringify(bottles.objects)}`);
      expect(
        countdown.ocr!.failed_frames === 0 && countdown.ocr!.segments >= 1,
        `${CLIP2}: no on-screen text read: ${JSON.stringify(countdown.ocr)}`,
      );
      expect(
        countdown.speech!.engine === 'silero-vad v4' && !countdown.speech!.note && countdown.speech!.segments >= 1,
        `${CLIP2}: no speech spans: ${JSON.stringify(countdown.speech)}`,
      );
      expect(
        countdown.embeddings!.segments >= 1 && bottles.embeddings!.segments >= 1,
        `embeddings: ${JSON.stringify([bottles.embeddings, countdown.embeddings])}`,
      );
      // The models and libraries came out of the executable into the data directory.
      const groups = existsSync(join(dataDir, 'assets'))
        ? readdirSync(join(dataDir, 'assets'))
            .map((d) => d.replace(/-[0-9a-f]+$/, ''))
            .sort()
        : [];
      expect(
        JSON.stringify(groups) === JSON.stringify(['embeddings', 'native', 'objects', 'ocr', 'vad']),
        `DATA_DIR/assets holds ${JSON.stringify(groups)}`,
      );
    },
  );

  // ---- POST /inquire (the smoke user has 3 credits)
  await check(
    'POST /inquire errors (not charged): 400 short token, 400 no prompt, 400 bad target, 401 unknown token, 404 unknown index, 404 unknown target_video',
    async () => {
      expectError(await post('/inquire', { token: 'short', index: indexId, prompt: 'hi' }), 400);
      expectError(await post('/inquire', { token, index: indexId, prompt: '' }), 400);
      expectError(await post('/inquire', { token, index: indexId, prompt: 'what?', target: 'yesterday' }), 400);
      expectError(await post('/inquire', { token: 'q'.repeat(64), index: indexId, prompt: 'what?' }), 401);
      expectError(await post('/inquire', { token, index: 'i'.repeat(64), prompt: 'what?' }), 404);
      expectError(
        await post('/inquire', { token, index: indexId, prompt: 'what?', target_video: 'v'.repeat(32) }),
        404,
      );
    },
  );
  await check('POST /inquire → 200 complete (twice)', async () => {
    const a = await post('/inquire', { token, index: indexId, prompt: 'What is in these videos?' });
    expectStatus(a, 200);
    expect(a.json?.status === 'complete' && typeof a.json.output === 'string' && a.json.output.length > 0, show(a));
    const b = await post('/inquire', {
      token,
      index: indexId,
      prompt: 'What happens here?',
      target: '0:05-0:10',
      target_video: key,
    });
    expectStatus(b, 200);
    expect(b.json?.status === 'complete' && typeof b.json.output === 'string', show(b));
  });
  await check('POST /inquire about one moment reads the frame at that moment (OCR in the server process)', async () => {
    // The countdown clip carries a watermark; 2.5 s is between its sampled frames.
    const r = await post('/inquire', {
      token,
      index: indexId,
      prompt: 'What is written on screen at this moment?',
      target: '2.5',
      target_video: key2,
    });
    expectStatus(r, 200);
    const read = (r.json?.evidence ?? []).filter(
      (e: { kind: string; start: number }) => e.kind === 'ocr' && e.start === 2.5,
    );
    expect(read.length > 0 && r.json.output.startsWith('At 0:02'), show(r));
  });
  await check(
    'POST /search by image (a stored frame as base64): every image reader ran inside the executable, the frame matched',
    async () => {
      const segs = await get(`/videos/${key}/segments` + q({ token }));
      expectStatus(segs, 200);
      const frame = await fetch(segs.json.frames[0].url);
      const image = Buffer.from(await frame.arrayBuffer()).toString('base64');
      const r = await post('/search', { project_id: token + indexId, api: token, image, numargs: 5, threshold: 1000 });
      expectStatus(r, 200);
      expect(r.json.status === 'complete' && Array.isArray(r.json.output?.embeddings), show(r));
      expect(
        JSON.stringify(r.json.image?.skipped) === '{}',
        `a reader failed: ${JSON.stringify(r.json.image?.skipped)}`,
      );
      expect(r.json.matched_by.includes('frame'), show(r));
      expect(
        r.json.output.embeddings.some((m: unknown[]) => m[0] === key),
        show(r),
      );
    },
  );
  await check(
    'POST /core/content-moderation: the NSFW model runs inside the executable; scene-detection; unknown flow 404',
    async () => {
      const r = await post('/core/content-moderation', { token, index: indexId, video_id: key });
      expectStatus(r, 200);
      const out = r.json.output;
      expect(
        out.models[0].startsWith('nsfwjs') && JSON.stringify(out.skipped) === '{}' && out.frames_checked > 0,
        `${JSON.stringify(out.skipped)} ${show(r)}`,
      );
      const scenes = await post('/core/scene-detection', { token, index: indexId, video_id: key });
      expectStatus(scenes, 200);
      expect(scenes.json.output.scenes.length > 0, show(scenes));
      expectError(await post('/core/no-such-flow', { token, index: indexId }), 404);
    },
  );
  await check('POST /inquire without credits → 400', async () => {
    const r = await post('/inquire', { token, index: indexId, prompt: 'And now?' });
    expectError(r, 400);
    expect(/credit/i.test(r.json.message), `message does not mention credits: ${r.json.message}`);
  });

  // ---- DELETE /indexes/{id} and restore
  await check('DELETE /indexes/{id} hides the index unless include_deleted=true', async () => {
    const r = await call('DELETE', `/indexes/${indexId}` + q({ token }));
    expectStatus(r, 200);
    expect(r.json?.index_id === indexId && r.json.deleted === true, show(r));
    const live = await get('/indexes' + q({ token }));
    expect(live.status === 200 && live.json.length === 0, `still listed: ${show(live)}`);
    const all = await get('/indexes' + q({ token, include_deleted: 'true' }));
    expect(all.status === 200 && all.json.length === 1 && all.json[0].deleted === true, show(all));
    expectError(await post('/remote-upload', { token, index: indexId, url: src(CLIP) }), 404);
    expectError(await get('/index-resources' + q({ token, index: indexId })), 404);
  });
  await check('DELETE /indexes errors: 401 no token, 404 unknown, 404 other user', async () => {
    expectError(await call('DELETE', `/indexes/${indexId}`), 401);
    expectError(await call('DELETE', `/indexes/${'n'.repeat(64)}` + q({ token })), 404);
    expectError(await call('DELETE', `/indexes/${indexId}` + q({ token: defaultToken })), 404);
  });
  await check('POST /indexes/{id}/restore', async () => {
    const r = await post(`/indexes/${indexId}/restore`, { token });
    expectStatus(r, 200);
    expect(r.json?.index_id === indexId && r.json.deleted === false && r.json.count === 2, show(r));
    const live = await get('/indexes' + q({ token }));
    expect(live.status === 200 && live.json.length === 1, show(live));
  });
  await check('POST /indexes/{id}/restore errors: 401 no token, 404 unknown', async () => {
    expectError(await post(`/indexes/${indexId}/restore`, {}), 401);
    expectError(await post(`/indexes/${'n'.repeat(64)}/restore`, { token }), 404);
  });

  // ---- POST /remove-from-index
  await check('POST /remove-from-index removes the video, its listing, link and files', async () => {
    const r = await post('/remove-from-index', { token, project_id: indexId, video_id: key2 });
    expectStatus(r, 200);
    expect(r.json?.status === 'complete', show(r));
    const list = await get('/index-resources' + q({ token, index: indexId }));
    expect(list.status === 200 && list.json.length === 1 && list.json[0].file_id === key, `listing: ${show(list)}`);
    expect(!existsSync(join(dataDir, 'media', key2)), 'its folder is still on disk');
    const idx = (await get('/indexes' + q({ token }))).json?.[0];
    expect(idx?.count === 1, `count ${idx?.count}`);
  });
  await check(
    'POST /remove-from-index errors: 401 no token, 400 no video_id, 404 removed video, 404 unknown index',
    async () => {
      expectError(await post('/remove-from-index', { project_id: indexId, video_id: key }), 401);
      expectError(await post('/remove-from-index', { token, project_id: indexId }), 400);
      expectError(await post('/remove-from-index', { token, project_id: indexId, video_id: key2 }), 404);
      expectError(await post('/remove-from-index', { token, project_id: 'n'.repeat(64), video_id: key }), 404);
    },
  );

  // ---- stop
  // ---- issue 14: the file as the body, a multipart form, the CLI client, search, exports
  let uploaded = '';
  await check(
    'POST /upload (raw body and multipart form) → the spec metadata; GET /search and insights.json',
    async () => {
      const bearer = { authorization: `Bearer ${defaultToken}` };
      const raw = await fetch(`${base}/upload?index=smoke-files&file_name=${CLIP}`, {
        method: 'POST',
        headers: { ...bearer, 'content-type': 'video/mp4' },
        body: Bun.file(join(mediaDir, CLIP)),
      });
      const rj = (await raw.json()) as any;
      expect(
        raw.status === 200 &&
          rj?.data?.type === 'metadata' &&
          rj.data.file_size_bytes === statSync(join(mediaDir, CLIP)).size &&
          /^\d+\.\d\d MB$/.test(rj.data.fileSize),
        `raw: HTTP ${raw.status} ${JSON.stringify(rj)}`,
      );
      uploaded = rj.data.key;
      const form = new FormData();
      form.append('file', Bun.file(join(mediaDir, CLIP2)), CLIP2);
      const mp = await fetch(`${base}/upload?index=smoke-files`, { method: 'POST', headers: bearer, body: form });
      const mj = (await mp.json()) as any;
      expect(
        mp.status === 200 && typeof mj?.data?.key === 'string',
        `multipart: HTTP ${mp.status} ${JSON.stringify(mj)}`,
      );
      const found = await get('/search' + q({ index: 'smoke-files', q: 'bottles' }), bearer);
      expect(found.status === 200 && Array.isArray(found.json?.moments) && found.json.credits_used === 0, show(found));
      const ins = await get(`/videos/${uploaded}/insights.json`, bearer);
      expect(ins.status === 200 && ins.json?.video_id === uploaded, show(ins));
    },
  );
  await check('CLI client: vidq add FILE, then vidq ls --index (plain lines, exit 0)', () => {
    const add = Bun.spawnSync(
      cmd('add', join(mediaDir, CLIP), '--index', 'smoke-cli', '--server', base, '--token', defaultToken),
      { env, cwd: dataDir, stdout: 'pipe', stderr: 'pipe', timeout: 120_000 },
    );
    expect(
      add.exitCode === 0 && add.stdout.toString().includes(`${CLIP}: ready`),
      `add exited ${add.exitCode}: ${add.stdout}${add.stderr}`,
    );
    const ls = Bun.spawnSync(cmd('ls', '--index', 'smoke-cli', '--server', base, '--token', defaultToken), {
      env,
      cwd: dataDir,
      stdout: 'pipe',
      stderr: 'pipe',
    });
    expect(
      ls.exitCode === 0 && ls.stdout.toString().includes(`${CLIP}\t`),
      `ls exited ${ls.exitCode}: ${ls.stdout}${ls.stderr}`,
    );
  });

  await check(
    'MCP: the compiled `vidq mcp` (stdio) lists the tools and runs search_moments; POST /mcp lists them',
    async () => {
      const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
      const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
      const [command, ...args] = cmd('mcp', '--server', base, '--token', defaultToken);
      const client = new Client({ name: 'vidq-smoke', version: '1.0.0' });
      await client.connect(new StdioClientTransport({ command: command!, args, env, cwd: dataDir, stderr: 'pipe' }));
      try {
        const names = (await client.listTools()).tools.map((t) => t.name);
        expect(names.length === 10 && names.includes('search_moments') && names.includes('ask'), `tools: ${names}`);
        const r = (await client.callTool({
          name: 'search_moments',
          arguments: { index: 'smoke-cli', query: 'bottle' },
        })) as { isError?: boolean; structuredContent?: any; content: { type: string }[] };
        expect(
          !r.isError && r.structuredContent?.moments?.length > 0 && r.structuredContent.credits_used === 0,
          `search_moments: ${JSON.stringify(r).slice(0, 300)}`,
        );
      } finally {
        await client.close();
      }
      const http = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${defaultToken}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
      const body = (await http.json().catch(() => null)) as any;
      expect(
        http.status === 200 && body?.result?.tools?.length === 10,
        `POST /mcp: HTTP ${http.status} ${JSON.stringify(body).slice(0, 200)}`,
      );
    },
  );

  await check('SIGTERM stops the server (exit 0 within 10 s)', async () => {
    proc!.kill('SIGTERM');
    const code = await Promise.race([proc!.exited, Bun.sleep(10_000).then(() => 'timeout' as const)]);
    expect(code === 0, `exit: ${code}; stderr: ${stderr.slice(-300)}`);
    let refused = false;
    try {
      await fetch(base + '/health', { signal: AbortSignal.timeout(2000) });
    } catch {
      refused = true;
    }
    expect(refused, 'the port still answers after the exit');
  });
}

try {
  await main();
} catch (e) {
  failed++;
  console.log(`not ok - smoke script: ${(e as Error).stack}`);
} finally {
  if (proc && proc.exitCode === null) {
    proc.kill('SIGKILL');
    await proc.exited;
  }
  origin?.stop(true);
  if (failed > 0 && stderr.trim())
    console.log(`# server stderr (tail):\n${stderr.slice(-3000).replace(/^/gm, '#   ')}`);
  rmSync(dataDir, { recursive: true, force: true });
}
console.log(`smoke: ${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
