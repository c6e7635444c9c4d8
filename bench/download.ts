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
 * downloader's peak RSS (VmHWM) is its own. Reports the median of the runs in MB/s, the ratio
 * service / curl-to-file, and peak RSS. The downloader also hashes (SHA-256) what it writes; curl
 * does not.
 *
 * A last row, Bun's own `Bun.write(dest, await fetch(url))` (no hash, no checks), shows how much of
 * the gap to curl is Bun's fetch rather than our code.
 *
 * Internal modes: --serve FILE (the origin), --fetch URL --dest FILE [--floor] (one download in a
 * fresh process).
 */
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const MB = 1024 * 1024;
const { values } = parseArgs({
  options: { mb: { type: 'string', default: '500' }, runs: { type: 'string', default: '3' }, serve: { type: 'string' }, fetch: { type: 'string' }, dest: { type: 'string' }, floor: { type: 'boolean' } },
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
  const before = rssFromProc();
  let sampledPeak = before.rss;
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
  console.log(JSON.stringify({ ms, bytes: r.bytes, sha256: r.sha256, rssBefore: before.rss, peakRss: Math.max(after.hwm, sampledPeak) }));
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

  type Sample = { mbps: number; peakRss?: number };
  const results: Record<string, Sample[]> = { 'curl → /dev/null': [], 'curl → file': [], 'vidq downloadToFile → file': [], 'Bun.write(fetch) → file': [] };

  const curl = (out: string): Sample => {
    const p = Bun.spawnSync(['curl', '-s', '--fail', '-o', out, '-w', '%{time_total} %{size_download}', url], { stdout: 'pipe', stderr: 'pipe' });
    if (p.exitCode !== 0) throw new Error(`curl failed: ${p.stderr}`);
    const [secs, size] = p.stdout.toString().trim().split(' ').map(Number) as [number, number];
    if (size !== bytes) throw new Error(`curl got ${size} bytes`);
    return { mbps: size / MB / secs };
  };

  try {
    for (let run = 1; run <= runs; run++) {
      results['curl → /dev/null']!.push(curl('/dev/null'));
      const curlFile = join(work, 'curl.bin');
      results['curl → file']!.push(curl(curlFile));
      rmSync(curlFile, { force: true });

      const dest = join(work, 'vidq.bin');
      const child = (floor: boolean) => {
        const p = Bun.spawnSync([bun, import.meta.path, '--fetch', url, '--dest', dest, ...(floor ? ['--floor'] : [])], { stdout: 'pipe', stderr: 'pipe' });
        if (p.exitCode !== 0) throw new Error(`download failed: ${p.stderr}`);
        const r = JSON.parse(p.stdout.toString().trim().split('\n').pop()!) as { ms: number; bytes: number; sha256: string; rssBefore: number; peakRss: number };
        if (r.bytes !== bytes || statSync(dest).size !== bytes || (!floor && r.sha256 !== expectedSha)) throw new Error('the download wrote something else than the source');
        rmSync(dest, { force: true });
        return r;
      };
      const r = child(false);
      results['vidq downloadToFile → file']!.push({ mbps: r.bytes / MB / (r.ms / 1000), peakRss: r.peakRss });
      const f = child(true);
      results['Bun.write(fetch) → file']!.push({ mbps: f.bytes / MB / (f.ms / 1000), peakRss: f.peakRss });
      console.log(
        `run ${run}: ` +
          Object.entries(results)
            .map(([k, v]) => `${k} ${v.at(-1)!.mbps.toFixed(0)} MB/s`)
            .join(', ') +
          `, downloader peak RSS ${(r.peakRss / MB).toFixed(0)} MB (${(r.rssBefore / MB).toFixed(0)} MB before)`,
      );
    }
  } finally {
    origin.kill();
    rmSync(work, { recursive: true, force: true });
  }

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const med = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v.map((s) => s.mbps))]));
  const peak = median(results['vidq downloadToFile → file']!.map((s) => s.peakRss!));
  console.log(`\n${sizeMb} MB from 127.0.0.1, median of ${runs} run(s):`);
  console.log(`  ${'client'.padEnd(30)} ${'MB/s'.padStart(8)}  ${'peak RSS'.padStart(9)}`);
  for (const [k, v] of Object.entries(med)) {
    const rss = k.startsWith('vidq') ? `${(peak / MB).toFixed(0)} MB` : k.startsWith('Bun') ? `${(median(results[k]!.map((s) => s.peakRss!)) / MB).toFixed(0)} MB` : '';
    console.log(`  ${k.padEnd(30)} ${v.toFixed(0).padStart(8)}  ${rss.padStart(9)}`);
  }
  const ratio = med['vidq downloadToFile → file']! / med['curl → file']!;
  console.log(`  ratio vidq / curl (both to a file): ${ratio.toFixed(2)}  (vidq / curl to /dev/null: ${(med['vidq downloadToFile → file']! / med['curl → /dev/null']!).toFixed(2)})`);
}
