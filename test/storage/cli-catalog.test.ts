/**
 * The administration commands on the catalog alone (issue 33): `vidq user create`, `token create`,
 * `token revoke` and `credits add`, run as real processes on the SQLite file of a data directory and
 * on a real PostgreSQL (--database / VIDQ_DATABASE_URL; test/pg.ts gives each run a database of its
 * own). What they write is read back through the catalog.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { AccountService } from '../../src/accounts/service';
import { type Catalog, postgresCatalog, sqliteCatalog } from '../../src/storage/catalog';
import { openDatabase } from '../../src/storage/db';
import { openPostgres } from '../../src/storage/pg';
import { creditEventsOf } from '../../src/storage/repositories/accounts';
import { freshPostgresDatabase, type TestDatabase } from '../pg';

const main = join(import.meta.dir, '../../src/main.ts');

interface Setup {
  name: string;
  /** The options (or environment) that name the catalog. */
  args(): string[];
  env(): Record<string, string>;
  /** The catalog the commands wrote, opened by the test to read it back. */
  open(): Promise<{ catalog: Catalog; close(): Promise<void> }>;
}

let pg: TestDatabase;
const dataDirs: string[] = [];
const freshDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'vidq-cli-catalog-'));
  dataDirs.push(d);
  return d;
};

beforeAll(async () => {
  pg = await freshPostgresDatabase();
});
afterAll(async () => {
  await pg?.drop();
  for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
});

function vidq(args: string[], env: Record<string, string> = {}) {
  const run = Bun.spawnSync([process.execPath, main, ...args], {
    env: { ...process.env, VIDQ_WORKER_CONFIG: '', VIDQ_DATABASE_URL: '', ...env },
    timeout: 60_000,
  });
  return { code: run.exitCode, out: run.stdout.toString(), err: run.stderr.toString() };
}

const setups: (() => Setup)[] = [
  () => {
    const data = freshDir();
    return {
      name: 'SQLite (the data directory)',
      args: () => ['--data-dir', data],
      env: () => ({}),
      async open() {
        const db = openDatabase(join(data, 'vidq.db'));
        return { catalog: sqliteCatalog(db), close: async () => db.$client.close() };
      },
    };
  },
  () => {
    const data = freshDir();
    return {
      name: 'PostgreSQL (--database)',
      args: () => ['--data-dir', data, '--database', pg.url],
      env: () => ({}),
      async open() {
        const db = await openPostgres(pg.url);
        return { catalog: postgresCatalog(db), close: () => db.$client.end() };
      },
    };
  },
  () => {
    const data = freshDir();
    return {
      name: 'PostgreSQL (VIDQ_DATABASE_URL)',
      args: () => ['--data-dir', data],
      env: () => ({ VIDQ_DATABASE_URL: pg.url }),
      async open() {
        const db = await openPostgres(pg.url);
        return { catalog: postgresCatalog(db), close: () => db.$client.end() };
      },
    };
  },
];

for (const make of setups) {
  const s = make();
  describe(`vidq user, token, credits and reanalyze on ${s.name}`, () => {
    test('a user with credits and a token; another token; credits added and taken; a token revoked', async () => {
      const made = vidq(['user', 'create', '--name', 'Ann', '--credits', '5', '--json', ...s.args()], s.env());
      expect(made.err).toBe('');
      expect(made.code).toBe(0);
      const user = JSON.parse(made.out) as { user_id: string; token: string; credits: number };
      expect(user.credits).toBe(5);

      const second = vidq(['token', 'create', '--user', user.user_id, '--json', ...s.args()], s.env());
      expect(second.code).toBe(0);
      const token2 = (JSON.parse(second.out) as { token: string }).token;

      const added = vidq(['credits', 'add', '--user', user.user_id, '--amount', '7', '--json', ...s.args()], s.env());
      expect(JSON.parse(added.out)).toEqual({ user_id: user.user_id, credits: 12 });
      const taken = vidq(['credits', 'add', '--user', user.user_id, '--amount=-2', '--json', ...s.args()], s.env());
      expect(JSON.parse(taken.out)).toEqual({ user_id: user.user_id, credits: 10 });

      const revoked = vidq(['token', 'revoke', '--token', token2, '--json', ...s.args()], s.env());
      expect(JSON.parse(revoked.out)).toEqual({ revoked: true });
      const again = vidq(['token', 'revoke', '--token', token2, '--json', ...s.args()], s.env());
      expect(again.code).toBe(1);
      expect(JSON.parse(again.out)).toEqual({ revoked: false });

      // Read back through the catalog: the first token works, the revoked one does not.
      const { catalog, close } = await s.open();
      try {
        const accounts = new AccountService(catalog);
        expect((await accounts.authenticate(user.token)).id).toBe(user.user_id);
        await expect(accounts.authenticate(token2)).rejects.toThrow(/unknown or revoked/);
        expect((await accounts.getUser(user.user_id))?.credits).toBe(10);
        expect((await creditEventsOf(catalog, user.user_id)).map((e) => e.delta)).toEqual([5, 7, -2]);
      } finally {
        await close();
      }
    });

    test('unlimited users; mistakes are refused with the reason and change nothing', async () => {
      const made = vidq(['user', 'create', '--name', 'Boss', '--credits', 'unlimited', '--json', ...s.args()], s.env());
      const boss = JSON.parse(made.out) as { user_id: string; credits: number | null };
      expect(boss.credits).toBeNull();
      const plus = vidq(['credits', 'add', '--user', boss.user_id, '--amount', '3', '--json', ...s.args()], s.env());
      expect(JSON.parse(plus.out).credits).toBeNull();

      const noUser = vidq(['token', 'create', '--user', 'u_nobody', ...s.args()], s.env());
      expect(noUser.code).not.toBe(0);
      expect(noUser.err).toContain('does not exist');
      const badName = vidq(['user', 'create', '--name', '   ', ...s.args()], s.env());
      expect(badName.code).not.toBe(0);
      expect(badName.err).toContain('name must be 1 to 100 printable characters');
      const made2 = vidq(['user', 'create', '--name', 'Cy', '--credits', '1', '--json', ...s.args()], s.env());
      const cy = JSON.parse(made2.out) as { user_id: string };
      const negative = vidq(['credits', 'add', '--user', cy.user_id, '--amount=-5', ...s.args()], s.env());
      expect(negative.code).not.toBe(0);
      expect(negative.err).toContain('the balance would become negative');
      const { catalog, close } = await s.open();
      try {
        expect((await new AccountService(catalog).getUser(cy.user_id))?.credits).toBe(1);
      } finally {
        await close();
      }
    });

    test('reanalyze: the ready videos of an index are queued on the catalog’s queue; an unknown index is refused', async () => {
      const made = vidq(['user', 'create', '--name', 'Dee', '--json', ...s.args()], s.env());
      const dee = JSON.parse(made.out) as { user_id: string };
      const indexName = `re-${dee.user_id.slice(-6)}`;
      const videoId = `V${dee.user_id.slice(-6)}`.padEnd(32, 'v');
      {
        const { catalog, close } = await s.open();
        try {
          const now = new Date();
          await catalog.run(async (db) => {
            await db
              .insert(catalog.t.mediaIndexes)
              .values({ id: `i_${videoId}`, userId: dee.user_id, name: indexName, createdAt: now });
            await db.insert(catalog.t.videos).values({
              id: videoId,
              indexId: `i_${videoId}`,
              userId: dee.user_id,
              sourceUrl: 'upload:',
              fileName: 'a.mp4',
              storagePath: `media/${videoId}/source.mp4`,
              status: 'ready',
              analysis: {},
              uploadedAt: now,
              updatedAt: now,
            });
          });
        } finally {
          await close();
        }
      }
      const unknown = vidq(['reanalyze', '--index', 'no-such-index', ...s.args()], s.env());
      expect(unknown.code).toBe(1);
      expect(unknown.err).toContain('no index "no-such-index"');

      const r = vidq(['reanalyze', '--index', indexName, '--json', ...s.args()], s.env());
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      const out = JSON.parse(r.out) as { queued: { file_id: string; analyzers: string[] }[] };
      expect(out.queued.map((q) => q.file_id)).toEqual([videoId]);
      expect(out.queued[0]!.analyzers.length).toBeGreaterThan(0);
      const { catalog, close } = await s.open();
      try {
        const { jobs, videos } = catalog.t;
        const rows = await catalog.run(async (db) => ({
          job: await db.select({ state: jobs.state }).from(jobs).where(eq(jobs.videoId, videoId)),
          video: await db.select({ status: videos.status }).from(videos).where(eq(videos.id, videoId)),
        }));
        expect(rows.job).toEqual([{ state: 'pending' }]);
        expect(rows.video).toEqual([{ status: 'processing' }]);
      } finally {
        await close();
      }
      // Asked again while it waits: not queued twice.
      const again = JSON.parse(vidq(['reanalyze', '--index', indexName, '--json', ...s.args()], s.env()).out) as {
        queued: unknown[];
        skipped: { reason: string }[];
      };
      expect(again.queued).toEqual([]);
      expect(again.skipped[0]!.reason).toContain('being analysed already');
    });

    if (s.name.startsWith('PostgreSQL'))
      test('nothing of the catalog is written to the data directory', () => {
        const args = s.args();
        const data = args[args.indexOf('--data-dir') + 1]!;
        expect(existsSync(join(data, 'vidq.db'))).toBe(false);
      });
  });
}
