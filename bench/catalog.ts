/**
 * bench/catalog: what the dialect-neutral catalog (src/storage/catalog.ts) costs over a synchronous
 * drizzle call on SQLite, and the same lookup on PostgreSQL (test/pg.ts: 127.0.0.1:5432 or a
 * throwaway cluster). The lookup: an index's webhook URL by primary key, the most frequent kind of
 * repository call.
 *
 *   bun bench/catalog.ts [--n 20000]
 *
 * Prints microseconds per lookup and the process's CPU seconds for each way.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { eq } from 'drizzle-orm';
import { postgresCatalog, sqliteCatalog, type Catalog } from '../src/storage/catalog';
import { openDatabase } from '../src/storage/db';
import { openPostgres } from '../src/storage/pg';
import { indexWebhookUrl, setIndexWebhookUrl } from '../src/storage/repositories/webhooks';
import { indexWebhooks } from '../src/storage/schema';
import { freshPostgresDatabase } from '../test/pg';

const { values } = parseArgs({ options: { n: { type: 'string' } } });
const N = Number(values.n ?? 20_000);

async function seed(c: Catalog): Promise<void> {
  await c.run(async (db) => {
    await db.insert(c.t.users).values({ id: 'u1', name: 'u', createdAt: new Date() });
    await db.insert(c.t.mediaIndexes).values({ id: 'i1', userId: 'u1', name: 'i', createdAt: new Date() });
  });
  await setIndexWebhookUrl(c, 'i1', 'https://hooks.example/h');
}

async function measure(name: string, n: number, once: () => unknown): Promise<void> {
  for (let i = 0; i < Math.min(1000, n); i++) await once();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await once();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  console.log(
    `${name.padEnd(44)} ${((ms * 1000) / n).toFixed(1).padStart(7)} µs/lookup  ${((cpu.user + cpu.system) / 1e6).toFixed(2)} CPU-s for ${n}`,
  );
}

const dir = mkdtempSync(join(tmpdir(), 'vidq-catalog-bench-'));
try {
  const db = openDatabase(join(dir, 'vidq.db'));
  const c = sqliteCatalog(db);
  await seed(c);
  // What the code did before: a synchronous drizzle lookup.
  await measure('SQLite, drizzle .get() (before)', N, () =>
    db.select({ url: indexWebhooks.url }).from(indexWebhooks).where(eq(indexWebhooks.indexId, 'i1')).get(),
  );
  await measure('SQLite, repository on the catalog (after)', N, () => indexWebhookUrl(c, 'i1'));
  db.$client.close();

  const pg = await freshPostgresDatabase();
  const pdb = await openPostgres(pg.url);
  try {
    const p = postgresCatalog(pdb);
    await seed(p);
    await measure(`PostgreSQL (${pg.server}), same repository`, Math.ceil(N / 10), () => indexWebhookUrl(p, 'i1'));
  } finally {
    await pdb.$client.end();
    await pg.drop();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
