/**
 * bench/download: the service's downloader (src/ingest/download.ts, the code behind POST
 * /remote-upload) against curl, on a 500 MB file served from loopback.
 *
 *   bun bench/download.ts [--mb 500] [--runs 3]
 *
 * The file (random-ish bytes, so nothing compresses) is written once to the temp directory and
 * reused. An origin process serves it with Bun.serve + Bun.file (sendfile). Each run then times, one
 * after another: curl to /dev/null, curl to a file on the same disk, and downloadToFile to a file,
 * each in its own process, so the origin never shares an event loop with the client and the
 * downloader's peak RSS (VmHWM, and rss sampled every 50 ms) is its own. Reports medians of the
 * runs: MB/s, CPU seconds per GB of the client process (steadier than MB/s on a busy machine), peak
 * RSS, and the ratio service / curl-to-file paired per run. The downloader also hashes (SHA-256)
 * what it writes; curl does not.
 *
 * A last row, Bun's own `Bun.write(dest, await fetch(url))` (no hash, no checks), shows how much of
 * the gap to curl is Bun's fetch rather than our code.
 *
 * Internal modes: --serve FILE (the origin), --fetch URL --dest FILE [--floor] (one download in a
 * fresh process).
 */
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const MB = 1024 * 1024;
const { values } = parseArgs({
  options: {
    mb: { type: 'string', default: '500' },
    runs: { type: 'string', default: '3' },
    serve: { type: 'string' },
    fetch: { type: 'string' },
    dest: { type: 'string' },
    floor: { type: 'boolean' },
  },
});

/** Peak and current resident set of this process, from /proc (bytes). */
function rssFromProc(): { hwm: number; rss: number } {
  const s = readFileSync('/proc/self/status', 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN) * 1024;
  return { hwm: kb('VmHWM'), rss: kb('VmRSS') };
}

if (values.serve) {
  // The origin: streams the file from disk for every request.
  const file = values.serve;
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(Bun.file(file)) });
  console.log(`http://127.0.0.1:${server.port}/big.bin`);
} else if (values.fetch) {
  const { downloadToFile } = await import('../src/ingest/download');
  let sampledPeak = rssFromProc().rss;
  const sampler = setInterval(() => (sampledPeak = Math.max(sampledPeak, process.memoryUsage().rss)), 50);
  const t0 = performance.now();
  const r = values.floor
    ? { bytes: await Bun.write(values.dest!, await fetch(values.fetch)), sha256: '' }
    : await downloadToFile(new URL(values.fetch), values.dest!, {
        policy: { allowPrivate: true },
        maxBytes: 64 * 1024 * MB,
        connectTimeoutMs: 15_000,
        idleTimeoutMs: 30_000,
        maxRedirects: 5,
      });
  const ms = performance.now() - t0;
  clearInterval(sampler);
  const after = rssFromProc();
  console.log(JSON.stringify({ ms, bytes: r.bytes, sha256: r.sha256, peakRss: Math.max(after.hwm, sampledPeak) }));
} else {
  await main();
}

async function main(): Promise<void> {
  const sizeMb = Number(values.mb);
  const runs = Number(values.runs);
  const bytes = sizeMb * MB;
  const source = join(tmpdir(), `vidq-bench-${sizeMb}mb.bin`);
  if (!existsSync(source) || statSync(source).size !== bytes) {
    process.stdout.write(`writing ${source} (${sizeMb} MB)... `);
    // 1 MiB of random bytes, each copy with a different counter stamped every 4 KiB: no two blocks alike.
    const block = new Uint8Array(MB);
    crypto.getRandomValues(block);
    const view = new DataView(block.buffer);
    const fd = openSync(source + '.tmp', 'w');
    for (let i = 0; i < sizeMb; i++) {
      for (let off = 0; off < MB; off += 4096) view.setUint32(off, i * 256 + off / 4096);
      writeSync(fd, block);
    }
    closeSync(fd);
    renameSync(source + '.tmp', source);
    console.log('done');
  }

  const bun = process.execPath;
  const origin = Bun.spawn([bun, import.meta.path, '--serve', source], { stdout: 'pipe', stderr: 'inherit' });
  const reader = (origin.stdout as ReadableStream<Uint8Array>).getReader();
  let url = '';
  while (!url.includes('\n')) {
    const { value, done } = await reader.read();
    if (done) throw new Error('the origin did not start');
    url += new TextDecoder().decode(value);
  }
  url = url.trim();
  const work = mkdtempSync(join(tmpdir(), 'vidq-bench-dl-'));
  const hasher = new Bun.CryptoHasher('sha256');
  for await (const chunk of Bun.file(source).stream()) hasher.update(chunk);
  const expectedSha = hasher.digest('hex');

  /** One download: throughput, CPU time of the client process, its peak RSS. */
  type Sample = { mbps: number; cpuMs: number; peakRss: number };
  const CURL_NULL = 'curl → /dev/null';
  const CURL_FILE = 'curl → file';
  const VIDQ = 'vidq downloadToFile → file';
  const FLOOR = 'Bun.write(fetch) → file';
  const results: Record<string, Sample[]> = { [CURL_NULL]: [], [CURL_FILE]: [], [VIDQ]: [], [FLOOR]: [] };
  const cpuMs = (p: { resourceUsage: { cpuTime: { total: bigint } } }) => Number(p.resourceUsage.cpuTime.total) / 1000;

  // curl's peak RSS comes from GNU time when present: the spawner's own maxRSS of a child includes
  // the parent's pages until exec (vfork), which swamps curl's ~10 MB.
  const gnuTime = existsSync('/usr/bin/time') ? ['/usr/bin/time', '-f', 'maxrss_kb %M'] : [];
  const curl = (out: string): Sample => {
    const p = Bun.spawnSync(
      [...gnuTime, 'curl', '-s', '--fail', '-o', out, '-w', '%{time_total} %{size_download}', url],
      { stdout: 'pipe', stderr: 'pipe' },
    );
    if (p.exitCode !== 0) throw new Error(`curl failed: ${p.stderr}`);
    const [secs, size] = p.stdout.toString().trim().split(' ').map(Number) as [number, number];
    if (size !== bytes) throw new Error(`curl got ${size} bytes`);
    const kb = /maxrss_kb (\d+)/.exec(p.stderr.toString())?.[1];
    return { mbps: size / MB / secs, cpuMs: cpuMs(p), peakRss: kb ? Number(kb) * 1024 : NaN };
  };
  const dest = join(work, 'out.bin');
  const child = (floor: boolean): Sample => {
    const p = Bun.spawnSync([bun, import.meta.path, '--fetch', url, '--dest', dest, ...(floor ? ['--floor'] : [])], {
      stdout: 'pipe',
      stderr: 'pipe',
    });
    if (p.exitCode !== 0) throw new Error(`download failed: ${p.stderr}`);
    const r = JSON.parse(p.stdout.toString().trim().split('\n').pop()!) as {
      ms: number;
      bytes: number;
      sha256: string;
      peakRss: number;
    };
    if (r.bytes !== bytes || statSync(dest).size !== bytes || (!floor && r.sha256 !== expectedSha))
      throw new Error('the download wrote something else than the source');
    rmSync(dest, { force: true });
    return { mbps: r.bytes / MB / (r.ms / 1000), cpuMs: cpuMs(p), peakRss: r.peakRss };
  };

  const ratios: number[] = [];
  try {
    for (let run = 1; run <= runs; run++) {
      results[CURL_NULL]!.push(curl('/dev/null'));
      results[CURL_FILE]!.push(curl(dest));
      rmSync(dest, { force: true });
      results[VIDQ]!.push(child(false));
      results[FLOOR]!.push(child(true));
      // Paired per run, so that load from elsewhere on the machine affects both sides alike.
      ratios.push(results[VIDQ]!.at(-1)!.mbps / results[CURL_FILE]!.at(-1)!.mbps);
      console.log(
        `run ${run}: ` +
          Object.entries(results)
            .map(([k, v]) => `${k} ${v.at(-1)!.mbps.toFixed(0)} MB/s`)
            .join(', '),
      );
    }
  } finally {
    origin.kill();
    rmSync(work, { recursive: true, force: true });
  }

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`\n${sizeMb} MB from 127.0.0.1 (${navigator.hardwareConcurrency} CPUs), median of ${runs} run(s):`);
  console.log(`  ${'client'.padEnd(28)} ${'MB/s'.padStart(6)} ${'CPU s/GB'.padStart(9)} ${'peak RSS'.padStart(9)}`);
  for (const [k, v] of Object.entries(results)) {
    const mbps = median(v.map((x) => x.mbps));
    const cpuPerGb = median(v.map((x) => x.cpuMs / 1000 / (sizeMb / 1024)));
    const rss = median(v.map((x) => x.peakRss)) / MB;
    console.log(
      `  ${k.padEnd(28)} ${mbps.toFixed(0).padStart(6)} ${cpuPerGb.toFixed(2).padStart(9)} ${(Number.isNaN(rss) ? 'n/a' : rss.toFixed(0) + ' MB').padStart(9)}`,
    );
  }
  console.log(`  ratio vidq / curl, both to a file (median of per-run ratios): ${median(ratios).toFixed(2)}`);
}
