/**
 * bench/webhook-flood: how long another user's webhook event waits while one user floods the
 * outbox with events for a receiver that never answers (issue 25 item 2).
 *
 *   bun bench/webhook-flood.ts [--flood 1000] [--rounds 5]
 *
 * Starts the real server in this process with a throw-away data directory; the flood is written
 * straight into the outbox (as 1,000 stored videos would), the other user's event comes from a
 * real upload. Reports each round's delay from the upload's answer to the delivery.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { clip, startTestServer } from '../test/helpers';

const { values } = parseArgs({
  options: { flood: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '5' } },
});
const flood = Number(values.flood);
const rounds = Number(values.rounds);

const dead = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  idleTimeout: 0,
  fetch: () => new Promise<Response>(() => {}),
});
const arrived = new Map<string, number>();
const good = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    const body = (await req.json()) as { video_id: string };
    arrived.set(body.video_id, performance.now());
    return new Response('ok');
  },
});
const srv = await startTestServer({ 'webhook-retry-ms': '60000' });
try {
  const db = srv.server.service.db.$client;
  const flooder = await srv.server.service.accounts.createUser('flooder', null);
  const insert = db.query(
    `INSERT INTO webhook_events (user_id, index_id, video_id, event, file_name, status, error, url, created_at, next_attempt_at)
     VALUES (?, 'flood', ?, 'video.ready', 'x.mp4', 'ready', NULL, ?, ?, ?)`,
  );
  const now = Date.now();
  db.transaction(() => {
    for (let i = 0; i < flood; i++)
      insert.run(flooder.user.id, `0000-${i}`, `http://127.0.0.1:${dead.port}/hook`, now, now);
  })();
  const clips = [
    'bottles.mp4',
    'chaplin-bw.mp4',
    'countdown-living-room.mp4',
    'skateboarding-dog.mp4',
    'drummer-vertical.mp4',
  ];
  const delays: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const name = clips[r % clips.length]!;
    const res = await fetch(
      `${srv.url}/upload?index=patient-${r}&webhook_url=${encodeURIComponent(`http://127.0.0.1:${good.port}/hook`)}`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${srv.token}`, 'content-type': 'video/mp4' },
        body: readFileSync(clip(name)),
      },
    );
    const key = ((await res.json()) as { data: { key: string } }).data.key;
    const t0 = performance.now();
    while (!arrived.has(key) && performance.now() - t0 < 60_000) await Bun.sleep(10);
    delays.push((arrived.get(key) ?? Number.NaN) - t0);
  }
  const pending = (db.query("SELECT count(*) AS n FROM webhook_events WHERE state = 'pending'").get() as { n: number })
    .n;
  console.log(
    `flood of ${flood} events to a receiver that never answers; the other user's delivery delay per round (ms): ${delays.map((d) => d.toFixed(0)).join(', ')}; max ${Math.max(...delays).toFixed(0)} ms; ${pending} events still pending`,
  );
} finally {
  await srv.stop();
  dead.stop(true);
  good.stop(true);
}
