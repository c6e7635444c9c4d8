/**
 * The answering core on PostgreSQL (issue 33): test/answering-core.test.ts as it is, with its fake
 * indexes on a real PostgreSQL (test/pg.ts: a fresh database per index, dropped after), filled and
 * read through the same catalog and repositories as on SQLite. Its indexes are made when it is
 * imported: the dialect is PostgreSQL for that moment only.
 */
import { expect, test } from 'bun:test';

const had = process.env.VIDQ_TEST_DIALECT;
process.env.VIDQ_TEST_DIALECT = 'postgres';
let dialects: string[];
try {
  const { FakeIndex } = await import('./fake-index');
  const probe = new FakeIndex([]);
  // A module of its own (the query string): SQLite's run of the same file may be loaded too.
  const suite: string = './answering-core.test?postgres';
  await import(suite);
  dialects = [probe.dialect];
  await probe.close();
} finally {
  if (had === undefined) delete process.env.VIDQ_TEST_DIALECT;
  else process.env.VIDQ_TEST_DIALECT = had;
}

test('the fake indexes of this file are on PostgreSQL', () => {
  expect(dialects).toEqual(['postgres']);
});
