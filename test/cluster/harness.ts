/**
 * Nodes of a vidq cluster as separate processes, for the cluster tests (issue 33): `vidq serve`
 * (an API node, or a plain single-machine server) and `vidq worker`, each its own process with its
 * own data directory, killed with SIGTERM or SIGKILL like a real machine; the shared clips of
 * MANIFEST.md; a real HTTP receiver for webhooks; and the reads the tests compare across nodes.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { lines } from '../../src/util/lines';
import { alive, descendants } from '../hardening/proc';
import { getJson, MEDIA_DIR } from '../helpers';

const MAIN = join(import.meta.dir, '../../src/main.ts');

/** Every video of the shared media (MANIFEST.md's table), without the audio-only files (refused: no video stream). */
export function manifestVideos(): string[] {
  const rows = readFileSync(join(MEDIA_DIR, 'MANIFEST.md'), 'utf8')
    .split('\n')
    .filter((l) => /^\|\s*[\w.-]+\.\w+\s*\|/.test(l));
  return rows
    .map((l) => l.split('|').map((c) => c.trim()))
    .filter((cells) => !/^audio only/i.test(cells.at(-2) ?? ''))
    .map((cells) => cells[1]!);
}

export interface NodeProc {
  kind: 'serve' | 'worker';
  proc: ReturnType<typeof Bun.spawn>;
  pid: number;
  dataDir: string;
  /** The API's base URL (serve only). */
  url: string;
  /** The node id a `vidq worker` prints at start (worker only). */
  id: string;
  /** What it printed on stdout up to its start line. */
  out: string;
}

const running = new Set<NodeProc>();

/**
 * Starts `vidq serve` or `vidq worker` on `dataDir` with `args` added, quiet, on a free port of
 * 127.0.0.1, and waits for its start line ("listening on URL", "vidq worker node ID").
 */
export async function spawnNode(kind: 'serve' | 'worker', dataDir: string, args: string[]): Promise<NodeProc> {
  const http = kind === 'serve' ? ['--host', '127.0.0.1', '--port', '0', '--min-free-bytes', '0'] : [];
  const proc = Bun.spawn(
    [
      process.execPath,
      MAIN,
      kind,
      '--data-dir',
      dataDir,
      '--log-level',
      'error',
      '--allow-private-urls',
      ...http,
      ...args,
    ],
    { stdout: 'pipe', stderr: 'inherit', stdin: 'ignore' },
  );
  const started = kind === 'serve' ? /listening on (http:\/\/\S+)/ : /vidq worker node (\S+) on /;
  let out = '';
  let found: RegExpExecArray | null = null;
  const it = lines(proc.stdout as ReadableStream<Uint8Array>)[Symbol.asyncIterator]();
  const deadline = Bun.sleep(120_000).then(() => 'timeout' as const);
  while (!found) {
    const next = await Promise.race([it.next(), deadline]);
    if (next === 'timeout') {
      proc.kill('SIGKILL');
      throw new Error(`${kind} did not start within 120 s: ${out}`);
    }
    if (next.done) throw new Error(`${kind} exited (code ${await proc.exited}) before it started: ${out}`);
    out += `${next.value}\n`;
    found = started.exec(next.value);
  }
  // Keep reading stdout so the node never blocks on a full pipe.
  void (async () => {
    try {
      for (;;) if ((await it.next()).done) break;
    } catch {}
  })();
  const node: NodeProc = {
    kind,
    proc,
    pid: proc.pid,
    dataDir,
    url: kind === 'serve' ? found[1]! : '',
    id: kind === 'worker' ? found[1]! : '',
    out,
  };
  running.add(node);
  return node;
}

/** The default user's token that a first `serve` on a catalog prints once (or leaves in its data directory). */
export function defaultToken(node: NodeProc): string {
  const printed = /^\s+([A-Za-z0-9_-]{60,64})$/m.exec(node.out)?.[1];
  const file = join(node.dataDir, 'default-token.txt');
  const token = printed ?? (existsSync(file) ? readFileSync(file, 'utf8').trim() : '');
  if (!token) throw new Error(`no default token from ${node.kind} on ${node.dataDir}: ${node.out}`);
  return token;
}

/**
 * kill -9 of a node. Its analysis processes are orphaned and must notice on their own (their stdin
 * closes) and exit: waits for that, returns how long it took.
 */
export async function kill9Node(node: NodeProc, graceMs = 15_000): Promise<number> {
  running.delete(node);
  const kids = descendants(node.pid);
  node.proc.kill('SIGKILL');
  await node.proc.exited;
  const t0 = Date.now();
  while (kids.some(alive)) {
    if (Date.now() - t0 > graceMs) {
      for (const k of kids.filter(alive)) process.kill(k, 'SIGKILL');
      throw new Error(`the analysis processes of the killed node were still running ${graceMs} ms later`);
    }
    await Bun.sleep(25);
  }
  return Date.now() - t0;
}

/** SIGTERM and wait (SIGKILL after 15 s, its descendants too). */
export async function stopNode(node: NodeProc): Promise<void> {
  running.delete(node);
  const kids = descendants(node.pid);
  node.proc.kill('SIGTERM');
  const code = await Promise.race([node.proc.exited, Bun.sleep(15_000).then(() => null)]);
  if (code === null) node.proc.kill('SIGKILL');
  await node.proc.exited;
  for (const k of kids) if (alive(k)) process.kill(k, 'SIGKILL');
}

/** Stops every node this process started and has not stopped (for afterAll). */
export async function stopAllNodes(): Promise<void> {
  await Promise.all([...running].map(stopNode));
}

/** A real local HTTP endpoint that records every webhook delivery it receives (and answers 200). */
export function webhookReceiver(): { url: string; received: any[]; stop(): void } {
  const received: any[] = [];
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      received.push(await req.json().catch(() => ({ unreadable: true })));
      return new Response('ok');
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hook`, received, stop: () => server.stop(true) };
}

/** The rows of GET /index-resources (an empty list while the index does not exist). */
export async function resources(base: string, token: string, index: string): Promise<any[]> {
  const r = await getJson(base, `/index-resources?token=${token}&index=${encodeURIComponent(index)}`);
  return Array.isArray(r.body) ? r.body : [];
}

export interface SegmentRow {
  kind: string;
  start: number;
  end: number;
  text: string;
}

/** A video's segments as a node serves them (GET /videos/{id}/segments), without row ids, in a stable order. */
export async function segmentsOf(base: string, token: string, fileId: string): Promise<SegmentRow[]> {
  const r = await getJson(base, `/videos/${fileId}/segments?token=${token}`);
  if (r.status !== 200) throw new Error(`segments of ${fileId} on ${base}: ${r.status} ${JSON.stringify(r.body)}`);
  return (r.body.segments as SegmentRow[])
    .map(({ kind, start, end, text }) => ({ kind, start, end, text }))
    .sort((a, b) => a.kind.localeCompare(b.kind) || a.start - b.start || a.end - b.end || a.text.localeCompare(b.text));
}

/** CPU seconds (user + system) a process and its live descendants have used so far, from /proc. */
export function cpuSeconds(pid: number): number {
  let ticks = 0;
  for (const p of [pid, ...descendants(pid)]) {
    try {
      const f = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
      // utime, stime, cutime, cstime (fields 14–17 of stat; the split drops the first two).
      ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    } catch {}
  }
  return ticks / 100;
}
