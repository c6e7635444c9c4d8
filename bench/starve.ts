/**
 * bench/starve: how long a 40-s clip (bottles.mp4) waits for its analysis behind one cheap-to-upload
 * file that is expensive to analyse, on a server with one analysis worker.
 *
 *   bun bench/starve.ts FILE [--analyzers visual] [--src DIR]
 *
 * FILE is uploaded first (e.g. the 23-hour file of bench/visual-bounds.ts), the clip right after;
 * reports the clip's time from upload to `ready`, and where FILE stood then. --src points at another
 * checkout's src/ (to compare with an older version).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    analyzers: { type: 'string', default: 'visual' },
    src: { type: 'string', default: join(import.meta.dir, '../src') },
  },
});
const file = positionals[0];
if (!file) throw new Error('usage: bun bench/starve.ts FILE [--analyzers visual] [--src DIR]');
const src = resolve(values.src!);
const { loadConfig } = await import(join(src, 'config.ts'));
const { startServer } = await import(join(src, 'server.ts'));
const clip = join(import.meta.dir, '../../shared/media/bottles.mp4');

const origin = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: (req) => new Response(Bun.file(new URL(req.url).pathname === '/clip.mp4' ? clip : resolve(file))),
});
const dir = mkdtempSync(join(tmpdir(), 'vidq-bench-starve-'));
const server = await startServer(
  loadConfig(
    {
      'data-dir': dir,
      port: '0',
      host: '127.0.0.1',
      'min-free-bytes': '0',
      'analysis-workers': '1',
      analyzers: values.analyzers,
      'allow-private-urls': true,
      'log-level': 'error',
    },
    {},
  ),
  () => {},
);
const { token } = await server.service.accounts.createUser('bench', null);
const upload = async (path: string) => {
  const res = await fetch(server.url + '/remote-upload', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ token, index: 'starve', url: `http://127.0.0.1:${origin.port}${path}` }),
  });
  return ((await res.json()) as { data: { key: string } }).data.key;
};
const row = (id: string) =>
  server.service.db.$client.query('SELECT status, stage, progress FROM videos WHERE id = ?').get(id) as {
    status: string;
    stage: string;
    progress: number;
  };
const big = await upload('/big.mp4');
const t0 = performance.now();
const small = await upload('/clip.mp4');
while (!['ready', 'failed'].includes(row(small).status)) await Bun.sleep(250);
const waited = (performance.now() - t0) / 1000;
console.log(
  JSON.stringify({
    file: basename(file),
    analyzers: values.analyzers,
    src,
    clip_ready_after_s: Math.round(waited * 10) / 10,
    clip: row(small).status,
    big_then: row(big),
  }),
);
await server.stop();
origin.stop(true);
rmSync(dir, { recursive: true, force: true });
