/**
 * Where the analyzers' files are: models, tfjs wasm binaries and the native libraries that
 * onnxruntime-node's and sharp's bindings link against.
 *
 * From source (`bun src/main.ts`, the tests, the bench) they are the npm packages' files in
 * node_modules, found by each analyzer's own resolver. In the compiled executable there is no
 * node_modules: scripts/build.ts embeds them (src/analysis/assets/embedded.generated.ts) and this module
 * extracts them once to DATA_DIR/assets/<group>-<hash>/ (hash: of the group's contents at build
 * time, so a new build with other files gets a fresh folder and older folders are removed), keeping
 * the packages' file names (model.json names its weight shards). A group is extracted into a
 * temporary folder that is renamed into place when complete, with a stamp of every file's size and
 * mtime; it is reused while every file still has the size the build recorded and the size and mtime
 * of the stamp, and extracted again otherwise. Concurrent processes (the server and its workers)
 * may race: the first rename wins and the others use its folder.
 *
 * The embedded N-API bindings (onnxruntime_binding.node, sharp's .node) are written by Bun to a
 * temporary file when required, so their $ORIGIN-relative search paths find nothing; their
 * libraries (libonnxruntime.so.1, libvips-cpp.so.42) are therefore loaded here first, by absolute
 * path, and the dynamic linker then resolves the bindings' dependency by soname to the loaded copy.
 */
import { vadModelFromEnv } from '../../config';
import { dlopen, FFIType } from 'bun:ffi';
import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { EMBEDDED_ASSETS, type AssetGroupName, type EmbeddedAssetGroup } from './embedded.generated';
import { EngineUnavailableError } from '../contracts';
import type { AnalysisAssets } from '../descriptor';
import { useFiles, type UseFiles } from '../engines/embedder';
import { objectModelPaths } from '../stages/objects';
import { ocrModelDir } from '../engines/paddle-ocr';
import { vadModelPath } from '../engines/vad';

/** The files each analyzer needs from the executable. */
const GROUPS_OF: Record<string, AssetGroupName[]> = {
  ocr: ['native', 'ocr'],
  objects: ['objects'],
  // The face models are Human's too: they travel in the objects group.
  faces: ['objects'],
  speech: ['native', 'vad'],
  embeddings: ['embeddings'],
};

/**
 * The files of the given analyzers (names as in `--analyzers`). In the executable this extracts
 * what is missing and loads the native libraries; a failed extraction (disk full, no permission)
 * throws, since no analysis could run.
 */
export async function analysisAssets(assetsDir: string, analyzers: readonly string[]): Promise<AnalysisAssets> {
  if (!EMBEDDED_ASSETS) {
    const opt = <T>(f: () => T): T | undefined => {
      try {
        return f();
      } catch {
        return undefined; // the analyzer's own resolver reports it, as it does without this module
      }
    };
    return {
      source: 'npm',
      ocrModelDir: analyzers.includes('ocr') ? opt(ocrModelDir) : undefined,
      objects: analyzers.includes('objects') || analyzers.includes('faces') ? opt(objectModelPaths) : undefined,
      vadModel: analyzers.includes('speech') ? opt(() => vadModelPath(vadModelFromEnv())) : undefined,
      embeddings: analyzers.includes('embeddings') ? opt(useFiles) : undefined,
      extracted: [],
      extractMs: 0,
      problems: [],
    };
  }
  const t0 = performance.now();
  const wanted = [...new Set(analyzers.flatMap((a) => GROUPS_OF[a] ?? []))];
  const dirs = new Map<AssetGroupName, string>();
  const extracted: AssetGroupName[] = [];
  const problems: string[] = [];
  for (const name of wanted) {
    if (!EMBEDDED_ASSETS[name]) {
      problems.push(`this executable was built without the ${name} files`);
      continue;
    }
    const r = await extractGroup(assetsDir, name);
    dirs.set(name, r.dir);
    if (r.extracted) extracted.push(name);
  }
  const native = dirs.get('native');
  if (native) problems.push(...loadNativeLibraries(native));
  const at = (name: AssetGroupName, rel = '') => {
    const d = dirs.get(name);
    return d === undefined ? undefined : join(d, rel);
  };
  const objects = at('objects');
  const embeddings = at('embeddings');
  return {
    source: 'embedded',
    ocrModelDir: at('ocr'),
    objects: objects ? { modelDir: join(objects, 'models'), wasmDir: join(objects, 'wasm') } : undefined,
    // VIDQ_VAD_MODEL still points the VAD at another Silero file.
    vadModel: vadModelFromEnv() || at('vad', 'silero_vad.onnx'),
    embeddings: embeddings ? { modelDir: join(embeddings, 'model'), wasmDir: join(embeddings, 'wasm') } : undefined,
    extracted,
    extractMs: Math.round(performance.now() - t0),
    problems,
  };
}

/** The sentence-embedding files alone (the HTTP server embeds questions): node_modules, or extracted. */
export async function embeddingFiles(assetsDir: string): Promise<UseFiles> {
  if (!EMBEDDED_ASSETS) return useFiles();
  if (!EMBEDDED_ASSETS.embeddings)
    throw new EngineUnavailableError('this executable was built without the sentence-embedding model');
  const { dir } = await extractGroup(assetsDir, 'embeddings');
  return { modelDir: join(dir, 'model'), wasmDir: join(dir, 'wasm') };
}

// ---------------------------------------------------------------------------------------------
// Extraction

const STAMP = '.stamp.json';

interface Stamp {
  group: string;
  hash: string;
  files: Record<string, { size: number; mtimeMs: number }>;
}

/** Extracts one embedded group unless an intact copy is in place; returns its folder. */
export async function extractGroup(
  assetsDir: string,
  name: AssetGroupName,
  groups = EMBEDDED_ASSETS,
): Promise<{ dir: string; extracted: boolean }> {
  const group = groups?.[name];
  if (!group) throw new EngineUnavailableError(`this executable was built without the ${name} files`);
  const dir = join(assetsDir, `${name}-${group.hash}`);
  if (isIntact(dir, name, group)) return { dir, extracted: false };

  mkdirSync(assetsDir, { recursive: true, mode: 0o700 });
  sweepLeftovers(assetsDir);
  const tmp = join(assetsDir, `.${name}-${group.hash}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`);
  try {
    const stamp: Stamp = { group: name, hash: group.hash, files: {} };
    for (const f of group.files) {
      const target = join(tmp, f.rel);
      mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
      const written = await Bun.write(target, Bun.file(f.path));
      if (written !== f.size) throw new Error(`${f.rel}: wrote ${written} of ${f.size} bytes`);
      chmodSync(target, /\.(so|dylib|node)(\.\d+)*$/.test(f.rel) ? 0o755 : 0o644);
      const st = statSync(target);
      stamp.files[f.rel] = { size: st.size, mtimeMs: st.mtimeMs };
    }
    writeFileSync(join(tmp, STAMP), JSON.stringify(stamp));
    install(tmp, dir, name, group);
  } catch (e) {
    throw new Error(`could not extract the ${name} files to ${assetsDir}: ${(e as Error).message}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  // Folders of other builds of this group are no longer used by this executable.
  for (const entry of readdirSync(assetsDir)) {
    if (entry !== `${name}-${group.hash}` && new RegExp(`^${name}-[0-9a-f]+$`).test(entry))
      rmSync(join(assetsDir, entry), { recursive: true, force: true });
  }
  return { dir, extracted: true };
}

/** Every file there with the build's size, and the size and mtime it had when it was extracted. */
function isIntact(dir: string, name: string, group: EmbeddedAssetGroup): boolean {
  let stamp: Stamp;
  try {
    stamp = JSON.parse(readFileSync(join(dir, STAMP), 'utf8')) as Stamp;
  } catch {
    return false;
  }
  if (stamp.group !== name || stamp.hash !== group.hash) return false;
  for (const f of group.files) {
    const s = stamp.files[f.rel];
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(join(dir, f.rel));
    } catch {
      return false;
    }
    if (!s || !st.isFile() || st.size !== f.size || s.size !== f.size || st.mtimeMs !== s.mtimeMs) return false;
  }
  return true;
}

/** Moves a complete extraction into place; a damaged copy there is replaced, an intact one (another process won) kept. */
function install(tmp: string, dir: string, name: string, group: EmbeddedAssetGroup): void {
  try {
    renameSync(tmp, dir);
    return;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e;
  }
  if (isIntact(dir, name, group)) return;
  const trash = `${tmp}.trash`;
  try {
    renameSync(dir, trash);
  } catch {
    /* someone else moved it meanwhile */
  }
  try {
    renameSync(tmp, dir);
  } catch (e) {
    if (!isIntact(dir, name, group)) throw e;
  } finally {
    // Files a running process still has open (a loaded library) stay valid until it closes them.
    rmSync(trash, { recursive: true, force: true });
  }
}

/** Temporary folders of extractions whose process is gone. */
function sweepLeftovers(assetsDir: string): void {
  for (const entry of readdirSync(assetsDir)) {
    const m = /^\..+\.(\d+)\.\w+\.tmp(?:\.trash)?$/.exec(entry);
    if (m && Number(m[1]) !== process.pid && !alive(Number(m[1])))
      rmSync(join(assetsDir, entry), { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// ---------------------------------------------------------------------------------------------
// Native libraries

const loaded = new Map<string, unknown>();

/** Loads the group's shared libraries (once per process); returns what failed. */
function loadNativeLibraries(dir: string): string[] {
  const group = EMBEDDED_ASSETS?.native;
  if (!group) return [];
  const problems: string[] = [];
  for (const f of group.files) {
    const path = join(dir, f.rel);
    if (!f.symbol || loaded.has(path)) continue;
    try {
      // dlopen needs one symbol to bind; it is never called.
      loaded.set(path, dlopen(path, { [f.symbol]: { args: [], returns: FFIType.ptr } }));
    } catch (e) {
      problems.push(`${f.rel} could not be loaded: ${(e as Error).message}`);
    }
  }
  return problems;
}
