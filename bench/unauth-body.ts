/**
 * bench/unauth-body: what an unauthenticated request with a ~1 MB JSON body (500k array elements)
 * costs the server, and how long GET /health takes while 16 of them are in flight.
 *
 *   bun bench/unauth-body.ts [--rounds 5]
 *
 * Starts the real server on 127.0.0.1 with a throw-away data directory, in this process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config';
import { startServer } from '../src/server';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const dir = mkdtempSync(join(tmpdir(), 'vidq-bench-body-'));
const server = await startServer(
  loadConfig(
    {
      'data-dir': dir,
      port: '0',
      host: '127.0.0.1',
      'min-free-bytes': '0',
      'analysis-workers': '0',
      'log-level': 'error',
    },
    {},
  ),
  () => {},
);
const body = JSON.stringify({ index: 'x', url: 'http://a/', extra: new Array(500_000).fill(0) });
const post = async () => {
  const t0 = performance.now();
  const res = await fetch(server.url + '/remote-upload', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  await res.arrayBuffer();
  return { ms: performance.now() - t0, status: res.status };
};
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

// Just under the default 128 KiB limit: refused (400) by the value count instead.
const under = JSON.stringify({ index: 'x', url: 'http://a/', extra: new Array(60_000).fill(0) });
const underMs: number[] = [];
let underStatus = 0;
for (let i = 0; i < 10; i++) {
  const t0 = performance.now();
  const res = await fetch(server.url + '/remote-upload', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: under,
  });
  await res.arrayBuffer();
  underMs.push(performance.now() - t0);
  underStatus = res.status;
}

const single: number[] = [];
let status = 0;
for (let i = 0; i < 10; i++) {
  const r = await post();
  single.push(r.ms);
  status = r.status;
}
const health: number[] = [];
for (let r = 0; r < Number(values.rounds); r++) {
  const burst = Promise.all(Array.from({ length: 16 }, post));
  const t0 = performance.now();
  await (await fetch(server.url + '/health')).arrayBuffer();
  health.push(performance.now() - t0);
  await burst;
}
console.log(
  JSON.stringify({
    body_bytes: body.length,
    status,
    one_request_median_ms: Math.round(median(single) * 10) / 10,
    health_during_16_parallel_median_ms: Math.round(median(health) * 10) / 10,
    health_max_ms: Math.round(Math.max(...health) * 10) / 10,
    under_limit_body_bytes: under.length,
    under_limit_status: underStatus,
    under_limit_median_ms: Math.round(median(underMs) * 10) / 10,
  }),
);
await server.stop();
rmSync(dir, { recursive: true, force: true });
