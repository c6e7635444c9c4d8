/**
 * `npm test`: checks that the embedded migrations match drizzle/, runs `bun test` (extra arguments
 * are passed on), streams its output, and ends with one plain line `N passed, N failed` taken from
 * bun's summary. Exits with bun's exit code (1 when the migrations are stale).
 */
const bun = process.execPath;
const root = new URL('..', import.meta.url).pathname;

const stale = Bun.spawnSync([bun, 'scripts/embed-migrations.ts', '--check'], {
  cwd: root,
  stdout: 'inherit',
  stderr: 'inherit',
});
if (stale.exitCode !== 0) {
  console.log('0 passed, 1 failed');
  process.exit(1);
}

// Integration tests start servers, worker processes and ffmpeg: give each up to a minute.
const proc = Bun.spawn([bun, 'test', '--timeout', '60000', ...process.argv.slice(2)], {
  cwd: root,
  stdin: 'ignore',
  stdout: 'pipe',
  stderr: 'pipe',
  env: process.stdout.isTTY ? { ...process.env, FORCE_COLOR: '1' } : process.env,
});
let tail = '';
async function pump(from: ReadableStream<Uint8Array>, to: NodeJS.WriteStream): Promise<void> {
  const dec = new TextDecoder();
  for await (const chunk of from) {
    to.write(chunk);
    tail = (tail + dec.decode(chunk, { stream: true })).slice(-4000);
  }
}
await Promise.all([pump(proc.stdout, process.stdout), pump(proc.stderr, process.stderr), proc.exited]);
const code = proc.exitCode ?? 1;

// bun's summary: " 42 pass", " 0 fail" (the last ones printed, colours stripped).
const plain = tail.replace(/\x1b\[[0-9;]*m/g, '');
const count = (word: string) => Number([...plain.matchAll(new RegExp(`^\\s*(\\d+) ${word}$`, 'gm'))].pop()?.[1] ?? NaN);
const pass = count('pass');
let fail = count('fail');
if (Number.isNaN(fail)) fail = code === 0 ? 0 : 1; // no summary: bun crashed or found no tests
if (code !== 0 && fail === 0) fail = 1; // e.g. an error outside any test
console.log(`${Number.isNaN(pass) ? 0 : pass} passed, ${fail} failed`);
process.exit(code);
