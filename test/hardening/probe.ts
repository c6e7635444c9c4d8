/**
 * A latency probe in a process of its own: one GET at a time against a URL for `ms` milliseconds
 * (or until stdin closes), a pause of `gap` ms between them; prints one JSON line with every latency
 * (ms), the start offset of each, and the statuses. Kept out of the test process so that the
 * test's own busy event loop (origin, upload and question clients) does not add to what is measured.
 *
 *   bun test/hardening/probe.ts URL MS [GAP]
 *
 * Prints "ready" first, then waits for a line on stdin before it starts (so the caller can begin
 * the load at the same moment).
 */
const [url, msArg, gapArg] = process.argv.slice(2);
const duration = Number(msArg ?? 10_000);
const gap = Number(gapArg ?? 10);
console.log('ready');
for await (const _ of console) break;
const t0 = performance.now();
const lat: number[] = [];
const at: number[] = [];
const statuses: Record<number, number> = {};
while (performance.now() - t0 < duration && lat.length < 100_000) {
  const t = performance.now();
  let status = 0;
  try {
    const r = await fetch(url!);
    await r.arrayBuffer();
    status = r.status;
  } catch {
    status = -1;
  }
  lat.push(performance.now() - t);
  at.push(Math.round(t - t0));
  statuses[status] = (statuses[status] ?? 0) + 1;
  await Bun.sleep(gap);
}
console.log(JSON.stringify({ lat, at, statuses }));
