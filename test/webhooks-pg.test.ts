/**
 * Webhooks on PostgreSQL (issue 33): two API nodes (two catalogs, two WebhookServices, each with its
 * pg-boss) on one real database deliver to a real receiver on 127.0.0.1. Every event once over the
 * cluster, in order per video, a refused delivery retried, one refused past the day given up to the
 * dead-letter queue (and the video's next event goes on), a rolled-back change sends nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { loadConfig } from '../src/config';
import { IndexService } from '../src/indexes/service';
import { createLogger } from '../src/log';
import type { Catalog } from '../src/storage/catalog';
import { setIndexWebhookUrl, webhookEvent } from '../src/storage/repositories/webhooks';
import { WEBHOOK_DEAD_QUEUE, WEBHOOK_QUEUE } from '../src/webhooks/pg-dispatch';
import { SIGNATURE_HEADER, WebhookService } from '../src/webhooks/service';
import { DIALECTS, type TwoNodes } from './dialects';
import { until } from './factories';

interface Delivery {
  path: string;
  body: { type: string; delivery_id: number; video_id: string };
  raw: string;
  signature: string | null;
}

/** Records every delivery; a path answers 500 while `refuse(path)` says so. */
function receiver() {
  const got: Delivery[] = [];
  const refusals = new Map<string, number>();
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const raw = await req.text();
      const path = new URL(req.url).pathname;
      got.push({ path, body: JSON.parse(raw), raw, signature: req.headers.get(SIGNATURE_HEADER) });
      const left = refusals.get(path) ?? 0;
      if (left > 0) {
        refusals.set(path, left - 1);
        return new Response('busy', { status: 500 });
      }
      return new Response('ok');
    },
  });
  return {
    url: (path: string) => `http://127.0.0.1:${server.port}${path}`,
    got,
    /** The next `n` deliveries to `path` are refused. */
    refuse: (path: string, n: number) => refusals.set(path, n),
    stop: () => server.stop(true),
  };
}

async function seedUser(c: Catalog, user: string): Promise<void> {
  await c.run(async (db) => {
    await db.insert(c.t.users).values({ id: user, name: user, credits: null, createdAt: new Date() });
  });
}

/** An index of `user` with its webhook URL, and `n` stored videos in it (processing). */
async function seedIndex(c: Catalog, user: string, name: string, url: string, n: number): Promise<string[]> {
  const now = new Date();
  const index = `i_${name}`;
  const videos = Array.from({ length: n }, (_, i) => `v_${name}_${i}`);
  await c.run(async (db) => {
    await db.insert(c.t.mediaIndexes).values({ id: index, userId: user, name, createdAt: now });
    for (const id of videos)
      await db.insert(c.t.videos).values({
        id,
        indexId: index,
        userId: user,
        sourceUrl: 'https://example.com/a.mp4',
        fileName: `${id}.mp4`,
        storagePath: `media/${id}/source.mp4`,
        status: 'processing',
        uploadedAt: now,
        updatedAt: now,
      });
  });
  await setIndexWebhookUrl(c, index, url);
  return videos;
}

const setStatus = (c: Catalog, video: string, status: 'ready' | 'failed') =>
  c.run(async (db) => {
    await db.update(c.t.videos).set({ status, updatedAt: new Date() }).where(eq(c.t.videos.id, video));
  });

const remove = (c: Catalog, video: string) =>
  c.run(async (db) => {
    await db.delete(c.t.videos).where(eq(c.t.videos.id, video));
  });

const outbox = (c: Catalog, videos: string[]) =>
  c.rows<{ id: number; video_id: string; event: string; state: string; attempts: number; queued_at: Date | null }>(
    sql`SELECT id::int AS id, video_id, event, state, attempts, queued_at FROM webhook_events
        WHERE video_id IN (${sql.join(
          videos.map((v) => sql`${v}`),
          sql`, `,
        )}) ORDER BY id`,
  );

describe('webhooks on PostgreSQL, two API nodes', () => {
  let nodes: TwoNodes;
  let rx: ReturnType<typeof receiver>;
  let services: WebhookService[] = [];
  const logs: string[] = [];

  beforeAll(async () => {
    nodes = await DIALECTS.find((d) => d.name === 'PostgreSQL')!.open();
    rx = receiver();
    const config = loadConfig(
      {
        'data-dir': '/tmp/vidq-webhooks-pg',
        database: nodes.url!,
        'webhook-retry-ms': '1000',
        'allow-private-urls': true,
      },
      {},
    );
    const log = createLogger('warn', {}, (l) => logs.push(l));
    services = [nodes.a, nodes.b].map(
      (catalog) => new WebhookService({ catalog, config, indexes: new IndexService(catalog), log, sweepMs: 1000 }),
    );
    await seedUser(nodes.a, 'u_one');
    await seedUser(nodes.a, 'u_two');
    await Promise.all(services.map((s) => s.start()));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop()));
    rx?.stop();
    await nodes?.close();
  }, 60_000);

  test('every event is delivered once over the cluster, signed, in order per video', async () => {
    const one = await seedIndex(nodes.a, 'u_one', 'once1', rx.url('/once'), 6);
    const two = await seedIndex(nodes.b, 'u_two', 'once2', rx.url('/once'), 6);
    const videos = [...one, ...two];
    // Each video: ready (or failed), then removed; the changes come from both nodes.
    await Promise.all(
      videos.map(async (v, i) => {
        const c = i % 2 ? nodes.a : nodes.b;
        await setStatus(c, v, i % 3 ? 'ready' : 'failed');
        await remove(c, v);
      }),
    );
    const events = await outbox(nodes.a, videos);
    expect(events.length).toBe(videos.length * 2);
    const mine = () => rx.got.filter((d) => d.path === '/once');
    await until(mine, (g) => new Set(g.map((d) => d.body.delivery_id)).size >= events.length, 30_000, 'every event');
    // Settled: nothing more comes.
    await Bun.sleep(1500);
    const got = mine();
    expect(got.map((d) => d.body.delivery_id).sort((x, y) => x - y)).toEqual(events.map((e) => e.id));
    for (const v of videos) {
      const seen = got.filter((d) => d.body.video_id === v).map((d) => d.body.type);
      expect(seen.length).toBe(2);
      expect(seen[1]).toBe('video.removed');
    }
    const secrets = new Map<string, string>();
    for (const user of ['u_one', 'u_two']) secrets.set(user, (await services[0]!.ensureSecret(user)).secret);
    for (const d of got) {
      const user = one.includes(d.body.video_id) ? 'u_one' : 'u_two';
      expect(d.signature).toBe(`sha256=${createHmac('sha256', secrets.get(user)!).update(d.raw).digest('hex')}`);
    }
    const rows = await outbox(nodes.a, videos);
    expect(rows.every((r) => r.state === 'delivered' && r.attempts === 1 && r.queued_at !== null)).toBe(true);
    const jobs = await nodes.a.rows<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM pgboss.job WHERE name = ${WEBHOOK_QUEUE} AND state = 'completed'`,
    );
    expect(jobs[0]!.n).toBeGreaterThanOrEqual(events.length);
  }, 60_000);

  test('a refused delivery is retried with back-off; the next event of the video waits for it', async () => {
    const [v] = await seedIndex(nodes.a, 'u_one', 'retry', rx.url('/retry'), 1);
    rx.refuse('/retry', 2);
    await setStatus(nodes.a, v!, 'ready');
    await remove(nodes.b, v!);
    const mine = () => rx.got.filter((d) => d.path === '/retry');
    await until(mine, (g) => g.some((d) => d.body.type === 'video.removed'), 30_000, 'the removal');
    const got = mine();
    // Two refusals, the accepted ready event, then the removal: never the removal before it.
    expect(got.map((d) => d.body.type)).toEqual(['video.ready', 'video.ready', 'video.ready', 'video.removed']);
    // The receiver has the removal before its node marks it delivered.
    const rows = await until(
      () => outbox(nodes.a, [v!]),
      (r) => r.every((x) => x.state !== 'pending'),
      10_000,
      'the removal marked delivered',
    );
    expect(rows.map((r) => [r.event, r.state, r.attempts])).toEqual([
      ['video.ready', 'delivered', 3],
      ['video.removed', 'delivered', 1],
    ]);
  }, 60_000);

  test('a delivery still refused a day after its event is given up to the dead-letter queue; the next event goes out', async () => {
    const [v] = await seedIndex(nodes.a, 'u_two', 'dead', rx.url('/dead'), 1);
    rx.refuse('/dead', 1_000_000);
    await setStatus(nodes.a, v!, 'ready');
    await until(
      () => outbox(nodes.a, [v!]),
      (r) => r[0]!.attempts >= 1,
      30_000,
      'a first refused attempt',
    );
    // As if the event were a day old: the next refusal is the last.
    await nodes.a.rows(
      sql`UPDATE webhook_events SET created_at = created_at - interval '25 hours' WHERE video_id = ${v!}`,
    );
    await until(
      () => outbox(nodes.a, [v!]),
      (r) => r[0]!.state === 'failed',
      30_000,
      'the delivery given up',
    );
    const first = (await outbox(nodes.a, [v!]))[0]!;
    expect((await webhookEvent(nodes.a, first.id))!.lastError).toContain('HTTP 500');
    const dead = await until(
      () =>
        nodes.a.rows<{ state: string; output: { reason?: string } | null }>(
          sql`SELECT state, output FROM pgboss.job WHERE name = ${WEBHOOK_QUEUE} AND data->>'eventId' = ${String(first.id)}`,
        ),
      (j) => j[0]?.state !== 'active',
      10_000,
      'the job settled',
    );
    expect(dead.map((j) => j.state)).toEqual(['failed']);
    expect(dead[0]!.output?.reason).toContain('HTTP 500');
    await until(
      () =>
        nodes.a.rows<{ n: number }>(
          sql`SELECT count(*)::int AS n FROM pgboss.job WHERE name = ${WEBHOOK_DEAD_QUEUE} AND data->>'eventId' = ${String(first.id)}`,
        ),
      (r) => r[0]!.n === 1,
      10_000,
      'the dead-letter copy',
    );
    await remove(nodes.b, v!);
    await until(
      () => rx.got.filter((d) => d.path === '/dead' && d.body.type === 'video.removed'),
      (g) => g.length >= 1,
      30_000,
      'the removal to be attempted',
    );
  }, 60_000);

  test('a slow receiver has at most 4 deliveries in flight per node; another receiver is not held up', async () => {
    let now = 0;
    let most = 0;
    const slow = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(req) {
        await req.text();
        most = Math.max(most, ++now);
        await Bun.sleep(1500);
        now--;
        return new Response('ok');
      },
    });
    try {
      const flood = await seedIndex(nodes.a, 'u_one', 'slow', `http://127.0.0.1:${slow.port}/slow`, 12);
      const [calm] = await seedIndex(nodes.a, 'u_two', 'calm', rx.url('/calm'), 1);
      await Promise.all(flood.map((v) => setStatus(nodes.b, v, 'ready')));
      await until(
        () => most,
        (n) => n >= 1,
        10_000,
        'the slow receiver to be busy',
      );
      const t0 = Date.now();
      await setStatus(nodes.a, calm!, 'ready');
      await until(
        () => rx.got.filter((d) => d.path === '/calm'),
        (g) => g.length === 1,
        10_000,
        'the calm delivery',
      );
      const calmMs = Date.now() - t0;
      expect((await outbox(nodes.a, flood)).filter((r) => r.state === 'pending').length).toBeGreaterThan(0);
      await until(
        () => outbox(nodes.a, flood),
        (r) => r.every((e) => e.state === 'delivered'),
        30_000,
        'the flood delivered',
      );
      // 4 per node (pg-boss's cluster-wide count of a group races when both nodes fetch at once).
      expect(most).toBeGreaterThanOrEqual(4);
      expect(most).toBeLessThanOrEqual(8);
      expect(calmMs).toBeLessThan(3000);
    } finally {
      slow.stop(true);
    }
  }, 60_000);

  test('a change rolled back sends nothing; the outbox has no row of it', async () => {
    const [gone, kept] = await seedIndex(nodes.b, 'u_one', 'rollback', rx.url('/rollback'), 2);
    await expect(
      nodes.b.write(async (tx) => {
        await setStatus(tx, gone!, 'ready');
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await setStatus(nodes.a, kept!, 'ready');
    const mine = () => rx.got.filter((d) => d.path === '/rollback');
    await until(mine, (g) => g.length >= 1, 30_000, 'the committed event');
    await Bun.sleep(1500);
    expect(mine().map((d) => d.body.video_id)).toEqual([kept!]);
    expect(await outbox(nodes.a, [gone!])).toEqual([]);
  }, 60_000);
});
