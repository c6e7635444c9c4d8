/**
 * Test factories: the set-ups many tests share, written once.
 * - waitIndexReady / waitVideoReady: poll GET /index-resources until the analysis ends;
 * - uploadAndWaitReady: POST /remote-upload, then wait for that video;
 * - userWithToken: one more user of a test server, with their token;
 * - stageContext: a hand-built StageContext for running one analysis stage on its own.
 */
import type { StageContext } from '../src/analysis/contracts';
import { createLogger } from '../src/log';
import { getJson, postJson, type TestServer } from './helpers';

type Srv = Pick<TestServer, 'url' | 'token'>;

interface WaitOptions {
  /** Whose token lists the index (default: the test server's user). */
  token?: string;
  timeoutMs?: number;
  intervalMs?: number;
  /** Called with every listing polled (for tests that also check what the listing showed). */
  onPoll?: (rows: any[]) => void;
}

const listOf = async (srv: Srv, index: string, token: string) =>
  (await getJson(srv.url, `/index-resources?index=${encodeURIComponent(index)}`, { authorization: `Bearer ${token}` }))
    .body as any[];

/**
 * Polls the index (a name or id) until every video in it is ready and there is at least one: the
 * rows. Throws with the failed rows as soon as one fails, or when the time is up.
 */
export async function waitIndexReady(
  srv: Srv,
  index: string,
  { token = srv.token, timeoutMs = 120_000, intervalMs = 250, onPoll }: WaitOptions = {},
): Promise<any[]> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const rows = await listOf(srv, index, token);
    onPoll?.(rows);
    if (rows.length && rows.every((r) => r.status === 'ready')) return rows;
    if (rows.some((r) => r.status === 'failed'))
      throw new Error(JSON.stringify(rows.filter((r) => r.status === 'failed')));
    if (Date.now() > end) throw new Error('analysis did not finish in time');
    await Bun.sleep(intervalMs);
  }
}

/** Polls the index until the video with this key is ready: its row. Throws with the row if it fails or the time is up. */
export async function waitVideoReady(
  srv: Srv,
  index: string,
  key: string,
  { token = srv.token, timeoutMs = 90_000, intervalMs = 200, onPoll }: WaitOptions = {},
): Promise<any> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const rows = await listOf(srv, index, token);
    onPoll?.(rows);
    const v = rows.find((r) => r.file_id === key);
    if (v?.status === 'ready') return v;
    if (v?.status === 'failed' || Date.now() > end) throw new Error(JSON.stringify(v));
    await Bun.sleep(intervalMs);
  }
}

/** Adds the video at `url` to the index (POST /remote-upload) and waits until it is ready: its key and row. */
export async function uploadAndWaitReady(
  srv: Srv,
  index: string,
  url: string,
  opts: WaitOptions & { body?: Record<string, unknown> } = {},
): Promise<{ key: string; row: any }> {
  const token = opts.token ?? srv.token;
  const up = await postJson(srv.url, '/remote-upload', { token, index, url, ...opts.body });
  if (up.status !== 200) throw new Error(`remote-upload answered ${up.status}: ${JSON.stringify(up.body)}`);
  const key = up.body.data.key as string;
  return { key, row: await waitVideoReady(srv, index, key, opts) };
}

/** One more user of the test server (credits: null for unlimited), with their token. */
export function userWithToken(srv: TestServer, name: string, credits: number | null = null) {
  const { user, token } = srv.server.service.accounts.createUser(name, credits);
  return { userId: user.id, token };
}

/**
 * A StageContext for running one stage by hand: no frames or segments stored, a quiet log, no
 * progress reports, a signal never aborted; `video` and `ffmpeg` given, anything else overridden.
 */
export function stageContext(
  fields: Pick<StageContext, 'video' | 'ffmpeg'> & Partial<Omit<StageContext, 'video' | 'ffmpeg'>>,
): StageContext {
  return {
    signal: new AbortController().signal,
    log: createLogger('error'),
    progress: () => {},
    frames: () => [],
    segments: () => [],
    ...fields,
  };
}
