/**
 * The analysis files: where they are when run from source, and the extraction the compiled
 * executable does (exercised here with ordinary files standing in for the embedded ones).
 */
import { afterAll, describe, expect, test } from 'bun:test';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analysisAssets, extractGroup } from '../../src/analysis/assets/extract';
import type { EmbeddedAssetGroup } from '../../src/analysis/assets/embedded.generated';

const work = mkdtempSync(join(tmpdir(), 'vidq-assets-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function sourceFiles(name: string, files: Record<string, string>, hash: string): EmbeddedAssetGroup {
  const dir = join(work, 'src-' + name + '-' + hash);
  mkdirSync(dir, { recursive: true });
  return {
    hash,
    files: Object.entries(files).map(([rel, text], i) => {
      const path = join(dir, `f${i}`);
      writeFileSync(path, text);
      return { rel, path, size: Buffer.byteLength(text) };
    }),
  };
}

describe('run from source', () => {
  test('the files are the npm packages in node_modules', async () => {
    const a = await analysisAssets(join(work, 'unused'), ['visual', 'ocr', 'objects', 'speech', 'embeddings']);
    expect(a.source).toBe('npm');
    expect(a.extracted).toEqual([]);
    expect(existsSync(join(a.ocrModelDir!, 'ch_PP-OCRv4_det_infer.onnx'))).toBe(true);
    expect(existsSync(join(a.objects!.modelDir, 'centernet.json'))).toBe(true);
    expect(existsSync(join(a.objects!.wasmDir, 'tfjs-backend-wasm.wasm'))).toBe(true);
    expect(a.vadModel!.endsWith('silero_vad.onnx') && existsSync(a.vadModel!)).toBe(true);
    expect(existsSync(join(a.embeddings!.modelDir, 'model.json'))).toBe(true);
    expect(existsSync(join(work, 'unused'))).toBe(false);
  });
  test('only the analyzers asked for', async () => {
    const a = await analysisAssets(join(work, 'unused'), ['visual', 'speech']);
    expect(a.vadModel).toBeDefined();
    expect(a.ocrModelDir ?? a.objects ?? a.embeddings).toBeUndefined();
  });
});

describe('extraction (compiled executable)', () => {
  const assetsDir = join(work, 'assets');
  const group = sourceFiles(
    'model',
    { 'model/model.json': '{"weights":["shard1"]}', 'model/shard1': 'WEIGHTS-1234', 'wasm/x.wasm': 'WASM' },
    'aaaa1111',
  );
  const groups = { embeddings: group };
  const dir = join(assetsDir, 'embeddings-aaaa1111');

  test('first use extracts the group under its own names, then it is reused', async () => {
    const first = await extractGroup(assetsDir, 'embeddings', groups);
    expect(first).toEqual({ dir, extracted: true });
    expect(readFileSync(join(dir, 'model/shard1'), 'utf8')).toBe('WEIGHTS-1234');
    expect(readFileSync(join(dir, 'wasm/x.wasm'), 'utf8')).toBe('WASM');
    expect((await extractGroup(assetsDir, 'embeddings', groups)).extracted).toBe(false);
    // Nothing temporary is left beside it.
    expect(readdirSync(assetsDir)).toEqual(['embeddings-aaaa1111']);
  });

  test('a file changed in place (same size) is extracted again', async () => {
    const f = join(dir, 'model/shard1');
    writeFileSync(f, 'WEIGHTS-9999');
    utimesSync(f, new Date(), new Date(Date.now() + 5000));
    expect(statSync(f).size).toBe(12);
    expect((await extractGroup(assetsDir, 'embeddings', groups)).extracted).toBe(true);
    expect(readFileSync(f, 'utf8')).toBe('WEIGHTS-1234');
  });

  test('a missing file or stamp is extracted again', async () => {
    rmSync(join(dir, 'wasm/x.wasm'));
    expect((await extractGroup(assetsDir, 'embeddings', groups)).extracted).toBe(true);
    expect(existsSync(join(dir, 'wasm/x.wasm'))).toBe(true);
    rmSync(join(dir, '.stamp.json'));
    expect((await extractGroup(assetsDir, 'embeddings', groups)).extracted).toBe(true);
    expect((await extractGroup(assetsDir, 'embeddings', groups)).extracted).toBe(false);
  });

  test('concurrent first uses agree on one folder', async () => {
    const other = join(work, 'assets-race');
    const rs = await Promise.all([1, 2, 3, 4].map(() => extractGroup(other, 'embeddings', groups)));
    expect(new Set(rs.map((r) => r.dir)).size).toBe(1);
    expect(readFileSync(join(rs[0]!.dir, 'model/model.json'), 'utf8')).toBe('{"weights":["shard1"]}');
    expect(readdirSync(other)).toEqual(['embeddings-aaaa1111']);
  });

  test('another build (other contents) gets a new folder and the old one goes; dead extractions are swept', async () => {
    mkdirSync(join(assetsDir, '.embeddings-aaaa1111.999999999.abc.tmp'));
    const next = sourceFiles('model2', { 'model/model.json': '{}', 'model/shard1': 'NEW' }, 'bbbb2222');
    const r = await extractGroup(assetsDir, 'embeddings', { embeddings: next });
    expect(r).toEqual({ dir: join(assetsDir, 'embeddings-bbbb2222'), extracted: true });
    expect(readdirSync(assetsDir)).toEqual(['embeddings-bbbb2222']);
  });

  test('a group the build did not embed is reported, not guessed', async () => {
    await expect(extractGroup(assetsDir, 'ocr', groups)).rejects.toThrow(/without the ocr files/);
  });
});
