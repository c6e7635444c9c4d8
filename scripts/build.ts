/**
 * `npm run build`: compiles the service into ONE self-contained executable, dist/vidq.
 *
 * It embeds, besides the code: the migrations (src/storage/migrations.generated.ts), the Swagger UI
 * assets (imported `with { type: 'file' }` in src/http/docs.ts) and this platform's static ffmpeg
 * and ffprobe from the @ffmpeg-installer / @ffprobe-installer packages. For the latter,
 * src/media/embedded.generated.ts (which says `null` in the repository, so that `bun src/main.ts`
 * and the tests never carry 150 MB of binaries) is rewritten for the duration of the compile and
 * always restored afterwards, so the working tree stays clean.
 *
 * Usage: bun scripts/build.ts [--outfile dist/vidq]
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dir, '..');
const distDir = join(root, 'dist');
const exe = process.platform === 'win32' ? 'vidq.exe' : 'vidq';
const argOut = process.argv.indexOf('--outfile');
const outfile = argOut > 0 && process.argv[argOut + 1] ? resolve(process.argv[argOut + 1]!) : join(distDir, exe);
const embeddedFile = join(root, 'src/media/embedded.generated.ts');

/** Paths of this platform's packaged binaries (the same packages binaries.ts falls back to). */
function packagedBinaries(): { ffmpeg: string; ffprobe: string } {
  const target = `${process.platform}-${process.arch}`;
  const suffix = process.platform === 'win32' ? '.exe' : '';
  const require = createRequire(join(root, 'package.json'));
  const find = (pkg: string, bin: string) => {
    try {
      return require.resolve(`${pkg}/${target}/${bin}${suffix}`);
    } catch {
      throw new Error(`${pkg}/${target} is not installed (run npm ci on this platform); cannot embed ${bin}`);
    }
  };
  return { ffmpeg: find('@ffmpeg-installer', 'ffmpeg'), ffprobe: find('@ffprobe-installer', 'ffprobe') };
}

function embeddedSource(bins: { ffmpeg: string; ffprobe: string }): string {
  // Absolute paths: no dependence on how the bundler resolves package subpaths.
  return `// Written by scripts/build.ts for the compiled executable, restored after the build. Do not commit.
import ffmpeg from ${JSON.stringify(bins.ffmpeg)} with { type: 'file' };
import ffprobe from ${JSON.stringify(bins.ffprobe)} with { type: 'file' };
export const EMBEDDED_BINARIES: { ffmpeg: string; ffprobe: string } | null = { ffmpeg: ffmpeg as unknown as string, ffprobe: ffprobe as unknown as string };
`;
}

const mb = (n: number) => (n / 1024 / 1024).toFixed(1);

async function main(): Promise<number> {
  const bins = packagedBinaries();
  // dist/ holds exactly one file: the executable.
  if (outfile.startsWith(distDir + '/')) {
    rmSync(distDir, { recursive: true, force: true });
    mkdirSync(distDir, { recursive: true });
  }

  const original = readFileSync(embeddedFile, 'utf8');
  const started = performance.now();
  let result: Awaited<ReturnType<typeof Bun.build>>;
  // Restore on Ctrl-C / kill too, not only on the way out of the try.
  const restoreAndExit = (signal: string) => {
    writeFileSync(embeddedFile, original);
    console.error(`build interrupted (${signal}); ${relative(root, embeddedFile)} restored`);
    process.exit(130);
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, restoreAndExit);
  try {
    writeFileSync(embeddedFile, embeddedSource(bins));
    result = await Bun.build({
      entrypoints: [join(root, 'src/main.ts')],
      minify: true,
      sourcemap: 'none',
      // Precompiled bytecode: about a third less start-up time for ~6 MB (measured with
      // scripts/smoke.ts's cold start); ESM bytecode needs compile, which this is.
      bytecode: true,
      format: 'esm',
      // The executable must not pick up a .env or bunfig.toml from wherever it is started.
      compile: { outfile, autoloadDotenv: false, autoloadBunfig: false },
      throw: false,
    });
  } finally {
    writeFileSync(embeddedFile, original);
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(sig, restoreAndExit);
  }
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    console.error('build failed');
    return 1;
  }
  for (const log of result.logs) console.warn(log);

  if (!existsSync(outfile)) {
    console.error(`build reported success but ${outfile} does not exist`);
    return 1;
  }
  if (outfile.startsWith(distDir + '/')) {
    const extra = readdirSync(distDir).filter((f) => join(distDir, f) !== outfile);
    if (extra.length) {
      console.error(`dist/ should hold only the executable; also found: ${extra.join(', ')}`);
      return 1;
    }
  }
  const size = statSync(outfile).size;
  const embedded = statSync(bins.ffmpeg).size + statSync(bins.ffprobe).size;
  console.log(`built ${relative(process.cwd(), outfile) || outfile} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  console.log(`executable size: ${mb(size)} MB (${size} bytes; ffmpeg + ffprobe embedded: ${mb(embedded)} MB)`);
  return 0;
}

process.exit(await main());
