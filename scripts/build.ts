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
 * The analyzers' files travel the same way: src/analysis/assets/embedded.generated.ts is rewritten to import
 * the OCR, object-detection, VAD and sentence-embedding models, the tfjs wasm binaries and the
 * native libraries of onnxruntime-node and sharp (src/analysis/assets/extract.ts extracts them to
 * DATA_DIR/assets on first use). Besides, the compile:
 * - has src/analysis/workers/objects-worker.ts, faces-worker.ts, embedder-worker.ts and moderation-worker.ts as further
 *   entrypoints (a Worker's code must be in the build), named without their folder so that
 *   `new URL('./objects-worker.ts', import.meta.url)` in src/analysis/workers/entries.ts finds them
 *   next to the main module in the executable as it does in src/;
 * - requires sharp's binding by its path (sharp picks it at run time from a list, which the bundler
 *   cannot follow), so that Bun embeds it as it embeds onnxruntime-node's;
 * - requires usearch's prebuilt binding by its path (it is looked up at run time, as sharp's is);
 * - turns `createRequire(import.meta.url)('<package>')` in src/ into `require('<package>')`, which
 *   the bundler includes (a runtime require finds no node_modules in the executable).
 *
 * Usage: bun scripts/build.ts [--outfile dist/vidq]
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative, resolve } from 'node:path';
import type { BunPlugin } from 'bun';
import { useFiles } from '../src/analysis/engines/embedder';
import { FACE_MODELS } from '../src/analysis/stages/faces';
import { objectModelPaths } from '../src/analysis/stages/objects';
import { ocrModelDir } from '../src/analysis/engines/paddle-ocr';
import { vadModelPath } from '../src/analysis/engines/vad';
import { bundlePageScript } from '../src/http/page-script';

const root = resolve(import.meta.dir, '..');
const distDir = join(root, 'dist');
const exe = process.platform === 'win32' ? 'vidq.exe' : 'vidq';
const argOut = process.argv.indexOf('--outfile');
const outfile = argOut > 0 && process.argv[argOut + 1] ? resolve(process.argv[argOut + 1]!) : join(distDir, exe);
const embeddedFile = join(root, 'src/media/embedded.generated.ts');
const assetsFile = join(root, 'src/analysis/assets/embedded.generated.ts');
const pageScriptFile = join(root, 'src/http/page-script.generated.ts');
const workerEntries = [
  join(root, 'src/analysis/workers/objects-worker.ts'),
  join(root, 'src/analysis/workers/faces-worker.ts'),
  join(root, 'src/analysis/workers/embedder-worker.ts'),
  join(root, 'src/analysis/workers/moderation-worker.ts'),
];
const rootRequire = createRequire(join(root, 'package.json'));

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

interface AssetFile {
  group: string;
  /** Path inside the group's extracted folder. */
  rel: string;
  src: string;
  /** For shared libraries: a symbol to bind when loading it. */
  symbol?: string;
}

/** Every file the analyzers load at run time, from the same places they use when run from source. */
function analysisFiles(): { files: AssetFile[]; sharpBinding: string | null } {
  const files: AssetFile[] = [];
  const add = (group: string, dir: string, names: string[], sub = '') => {
    for (const n of names) {
      const src = join(dir, n);
      if (!existsSync(src)) throw new Error(`${src} is missing (run npm ci); cannot embed it`);
      files.push({ group, rel: sub ? `${sub}/${n}` : n, src });
    }
  };
  const wasm = ['tfjs-backend-wasm.wasm', 'tfjs-backend-wasm-simd.wasm', 'tfjs-backend-wasm-threaded-simd.wasm'];

  add('ocr', ocrModelDir(), ['ch_PP-OCRv4_det_infer.onnx', 'ch_PP-OCRv4_rec_infer.onnx', 'ppocr_keys_v1.txt']);

  const objects = objectModelPaths();
  add(
    'objects',
    objects.modelDir,
    ['centernet.json', 'movenet-lightning.json', ...FACE_MODELS].flatMap((m) => [
      m,
      ...weightFiles(join(objects.modelDir, m)),
    ]),
    'models',
  );
  add('objects', objects.wasmDir, wasm, 'wasm');

  // The package's model, whatever VIDQ_VAD_MODEL of this shell points the VAD at.
  const vad = vadModelPath();
  add('vad', dirname(vad), [basename(vad)]);
  if (basename(vad) !== 'silero_vad.onnx') throw new Error(`unexpected VAD model name ${vad}`);

  const use = useFiles();
  add(
    'embeddings',
    use.modelDir,
    ['model.json', ...weightFiles(join(use.modelDir, 'model.json')), 'vocab.json'],
    'model',
  );
  add('embeddings', use.wasmDir, wasm, 'wasm');

  // onnxruntime-node's binding is embedded by Bun (a static require); the library it links is not.
  const ortBin = join(
    dirname(rootRequire.resolve('onnxruntime-node')),
    '..',
    'bin',
    'napi-v6',
    process.platform,
    process.arch,
  );
  const ortLib = readdirSync(ortBin).find((f) => /^libonnxruntime\.(so\.\d+|\d[\d.]*\.dylib)$/.test(f));
  if (!ortLib) throw new Error(`no libonnxruntime in ${ortBin}`);
  files.push({ group: 'native', rel: ortLib, src: join(ortBin, ortLib), symbol: 'OrtGetApiBase' });

  // sharp (the OCR stage decodes frames with it): its binding and libvips, when installed.
  let sharpBinding: string | null = null;
  try {
    const sharpRequire = createRequire(rootRequire.resolve('sharp'));
    const target = `${process.platform}-${process.arch}`;
    sharpBinding = sharpRequire.resolve(`@img/sharp-${target}/sharp.node`);
    const vipsDir = dirname(createRequire(sharpBinding).resolve(`@img/sharp-libvips-${target}/lib`));
    const vips = readdirSync(vipsDir).find((f) => /^libvips-cpp\.(so\.\d+|\d[\d.]*\.dylib)$/.test(f));
    if (!vips) throw new Error(`no libvips-cpp in ${vipsDir}`);
    files.push({ group: 'native', rel: vips, src: join(vipsDir, vips), symbol: 'vips_version' });
  } catch (e) {
    console.warn(
      `warning: sharp's binding is not embedded, so the OCR stage cannot decode frames in the executable: ${(e as Error).message}`,
    );
    sharpBinding = null;
  }
  return { files, sharpBinding };
}

/** The weight files a tfjs model.json names (the extracted copies must keep these names). */
function weightFiles(modelJson: string): string[] {
  const json = JSON.parse(readFileSync(modelJson, 'utf8')) as { weightsManifest?: { paths: string[] }[] };
  return (json.weightsManifest ?? []).flatMap((g) => g.paths);
}

/** The generated module: one `with { type: 'file' }` import per file, grouped, with sizes and a content hash per group. */
function assetsSource(files: AssetFile[]): { source: string; bytes: number } {
  const groups = new Map<string, AssetFile[]>();
  for (const f of files) groups.set(f.group, [...(groups.get(f.group) ?? []), f]);
  const committed = readFileSync(assetsFile, 'utf8');
  const types = committed.slice(
    committed.indexOf('/** One embedded file'),
    committed.indexOf('export const EMBEDDED_ASSETS'),
  );
  const imports: string[] = [];
  const entries: string[] = [];
  let bytes = 0;
  let n = 0;
  for (const [group, list] of groups) {
    const hash = createHash('sha256');
    const rows: string[] = [];
    for (const f of list) {
      const data = readFileSync(f.src);
      hash.update(f.rel).update('\0').update(data);
      bytes += data.length;
      const id = `f${n++}`;
      imports.push(`import ${id} from ${JSON.stringify(f.src)} with { type: 'file' };`);
      rows.push(
        `{ rel: ${JSON.stringify(f.rel)}, path: ${id} as unknown as string, size: ${data.length}${f.symbol ? `, symbol: ${JSON.stringify(f.symbol)}` : ''} }`,
      );
    }
    entries.push(
      `  ${group}: { hash: ${JSON.stringify(hash.digest('hex').slice(0, 16))}, files: [\n    ${rows.join(',\n    ')},\n  ] },`,
    );
  }
  const source = `// Written by scripts/build.ts for the compiled executable, restored after the build. Do not commit.
${imports.join('\n')}

${types}export const EMBEDDED_ASSETS: Partial<Record<AssetGroupName, EmbeddedAssetGroup>> | null = {
${entries.join('\n')}
};
`;
  return { source, bytes };
}

/** See the top of this file: sharp's binding by path, and createRequire calls in src/ made bundleable. */
function bundlingPlugin(sharpBinding: string | null): BunPlugin {
  return {
    name: 'vidq-compile',
    setup(build) {
      // usearch (the centroid graph of src/search/ivf.ts) finds its binding at run time (node-gyp-build),
      // which the bundler cannot follow: require this platform's prebuilt one by its path instead.
      const usearchBinding = join(
        dirname(rootRequire.resolve('usearch')),
        '..',
        '..',
        '..',
        'prebuilds',
        `${process.platform}-${process.arch}`,
        'usearch.node',
      );
      build.onLoad(
        { filter: /[\\/]node_modules[\\/]usearch[\\/]javascript[\\/]dist[\\/](esm|cjs)[\\/]usearch\.js$/ },
        async (args) => {
          if (!existsSync(usearchBinding))
            throw new Error(`no prebuilt usearch binding for this platform: ${usearchBinding}`);
          const source = readFileSync(args.path, 'utf8');
          const patched = source.replace(
            /(?:\(0, node_gyp_build_1\.default\)|build)\(getBuildDir\(getDirName\(\)\)\)/,
            `require(${JSON.stringify(usearchBinding)})`,
          );
          if (patched === source) throw new Error(`usearch's loader changed; update scripts/build.ts (${args.path})`);
          return { contents: patched, loader: 'js' };
        },
      );
      if (sharpBinding) {
        build.onLoad({ filter: /[\\/]node_modules[\\/]sharp[\\/]lib[\\/]sharp\.js$/ }, () => ({
          contents: `module.exports = require(${JSON.stringify(sharpBinding)});\n`,
          loader: 'js',
        }));
      }
      const src = join(root, 'src') + '/';
      build.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async (args) => {
        const text = await Bun.file(args.path).text();
        if (!args.path.startsWith(src)) return { contents: text, loader: 'ts' };
        const rewritten = text.replace(
          /\bcreateRequire\(import\.meta\.url\)\((['"])([^'"\n]+)\1\)/g,
          (call, _q: string, spec: string) => {
            try {
              Bun.resolveSync(spec, dirname(args.path));
            } catch {
              return call; // not resolvable here either: left to fail (and be handled) at run time
            }
            return `require(${JSON.stringify(spec)})`;
          },
        );
        return { contents: rewritten, loader: 'ts' };
      });
    },
  };
}

const mb = (n: number) => (n / 1024 / 1024).toFixed(1);

async function main(): Promise<number> {
  const bins = packagedBinaries();
  const analysis = analysisFiles();
  // dist/ holds exactly one file: the executable.
  if (outfile.startsWith(distDir + '/')) {
    rmSync(distDir, { recursive: true, force: true });
    mkdirSync(distDir, { recursive: true });
  }

  const original = readFileSync(embeddedFile, 'utf8');
  const originalAssets = readFileSync(assetsFile, 'utf8');
  const originalPageScript = readFileSync(pageScriptFile, 'utf8');
  const started = performance.now();
  const generatedAssets = assetsSource(analysis.files);
  let result: Awaited<ReturnType<typeof Bun.build>>;
  const restore = () => {
    writeFileSync(embeddedFile, original);
    writeFileSync(assetsFile, originalAssets);
    writeFileSync(pageScriptFile, originalPageScript);
  };
  // Restore on Ctrl-C / kill too, not only on the way out of the try.
  const restoreAndExit = (signal: string) => {
    restore();
    console.error(
      `build interrupted (${signal}); ${relative(root, embeddedFile)} and ${relative(root, assetsFile)} restored`,
    );
    process.exit(130);
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, restoreAndExit);
  try {
    writeFileSync(embeddedFile, embeddedSource(bins));
    writeFileSync(assetsFile, generatedAssets.source);
    // The web page's TypeScript, bundled for the browser once, served by the executable as it is.
    writeFileSync(
      pageScriptFile,
      `// Written by scripts/build.ts for the compiled executable, restored after the build. Do not commit.\nexport const PREBUILT_PAGE_SCRIPT: string | null = ${JSON.stringify(await bundlePageScript())};\n`,
    );
    result = await Bun.build({
      entrypoints: [join(root, 'src/main.ts'), ...workerEntries],
      // [name] without [dir]: the workers sit next to the main module, as objects.ts and embedder-thread.ts expect.
      naming: { entry: '[name].[ext]' },
      plugins: [bundlingPlugin(analysis.sharpBinding)],
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
    restore();
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
  console.log(
    `built ${relative(process.cwd(), outfile) || outfile} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  console.log(
    `executable size: ${mb(size)} MB (${size} bytes; ffmpeg + ffprobe embedded: ${mb(embedded)} MB; analysis models and libraries: ${mb(generatedAssets.bytes)} MB in ${analysis.files.length} files)`,
  );
  return 0;
}

process.exit(await main());
