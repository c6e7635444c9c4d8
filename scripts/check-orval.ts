/**
 * A documented check (not part of `npm test`: orval is a large tool): generates a fetch client with
 * orval from the served /openapi.json and sends every POST through it, the way issue 15 found them
 * failing (orval, seeing several request types, sent bodies without a Content-Type).
 *
 *   bun scripts/check-orval.ts [path/to/orval]     (default: npx --yes orval@8.38.0, from the npm registry)
 *
 * Starts a throw-away server on 127.0.0.1 with one clip from ../shared/media; prints one line per call.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOrigin, startTestServer } from '../test/helpers';

const orval = process.argv[2] ? [process.argv[2]] : ['npx', '--yes', 'orval@8.38.0'];
const dir = mkdtempSync(join(tmpdir(), 'vidq-orval-'));
const origin = startOrigin();
const srv = await startTestServer();
let failed = 0;
try {
  writeFileSync(join(dir, 'openapi.json'), await (await fetch(srv.url + '/openapi.json')).text());
  writeFileSync(
    join(dir, 'orval.config.cjs'),
    `module.exports = { vidq: { input: './openapi.json', output: { target: './vidq.ts', client: 'fetch', baseUrl: ${JSON.stringify(srv.url)} } } };`,
  );
  const gen = Bun.spawnSync([...orval, '--config', 'orval.config.cjs'], { cwd: dir, stdout: 'pipe', stderr: 'pipe' });
  if (gen.exitCode !== 0) throw new Error(`orval failed: ${gen.stderr.toString()}${gen.stdout.toString()}`);
  const api = await import(join(dir, 'vidq.ts'));
  const report = (name: string, r: { status: number; data: unknown }, want: number) => {
    const ok = r.status === want;
    if (!ok) failed++;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}: ${r.status} ${JSON.stringify(r.data).slice(0, 160)}`);
  };
  const up = await api.remoteUpload({
    token: srv.token,
    index: 'orval',
    url: `${origin.url}/media/countdown-living-room.mp4`,
  });
  report('remoteUpload', up, 200);
  const indexId = (await api.listIndexes({ token: srv.token })).data[0].index_id;
  report('inquire', await api.inquire({ token: srv.token, index: indexId, prompt: 'What is written on screen?' }), 200);
  report(
    'inquireStream',
    await api.inquireStream({ token: srv.token, index: indexId, prompt: 'What is written on screen?' }),
    200,
  );
  report('restoreIndex', await api.restoreIndex(indexId, { token: srv.token }), 200);
  report(
    'removeFromIndex',
    await api.removeFromIndex({ token: srv.token, project_id: indexId, video_id: up.data.data.key }),
    200,
  );
  report(
    'inquire (404: an error, typed)',
    await api.inquire({ token: srv.token, index: 'z'.repeat(64), prompt: 'x' }),
    404,
  );
} finally {
  await srv.stop();
  origin.stop();
  rmSync(dir, { recursive: true, force: true });
}
console.log(failed ? `${failed} failed` : 'all orval calls succeeded');
process.exit(failed ? 1 : 0);
