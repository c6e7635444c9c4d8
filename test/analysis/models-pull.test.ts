/**
 * `models pull` against a local server that mimics the Hugging Face hub's URL layout (file listing
 * at /api/models/<id>/tree/<rev>, files at /<id>/resolve/<rev>/<path> redirecting to a CDN), since
 * the real hub cannot be reached from the tests. The served model is the tests' tiny Whisper.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pullWhisperModel } from '../../src/analysis/assets/models-pull';
import { createSpeechToText, whisperRequiredFiles } from '../../src/analysis/engines/stt';
import { TINY_WHISPER_TEXT, writeTinyWhisper } from './tiny-whisper';

const ID = 'acme/tiny-whisper.en';
const tmp = mkdtempSync(join(tmpdir(), 'vidq-pull-'));
const source = writeTinyWhisper(join(tmp, 'hub'), ID);
writeFileSync(join(source, 'README.md'), '# not needed locally\n');

/** Every file of the repo, as the hub lists it: LFS (sha256) for .onnx, a git blob id otherwise. */
function listing() {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }))
      e.isDirectory() ? walk(join(d, e.name)) : files.push(relative(source, join(d, e.name)));
  };
  walk(source);
  return files.map((path) => {
    const data = readFileSync(join(source, path));
    if (path.endsWith('.onnx')) {
      return {
        type: 'file',
        path,
        size: 134,
        oid: 'f'.repeat(40),
        lfs: { oid: new Bun.CryptoHasher('sha256').update(data).digest('hex'), size: data.length, pointerSize: 134 },
      };
    }
    const git = new Bun.CryptoHasher('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');
    return { type: 'file', path, size: data.length, oid: git };
  });
}

let hub: ReturnType<typeof Bun.serve>;
/** Paths whose content the fake CDN corrupts (one byte flipped). */
const corrupt = new Set<string>();
const requests: string[] = [];

beforeAll(() => {
  hub = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const url = new URL(req.url);
      requests.push(url.pathname);
      const tree = /^\/api\/models\/(.+)\/tree\/main$/.exec(url.pathname);
      if (tree) {
        if (decodeURIComponent(tree[1]!) !== ID)
          return Response.json({ error: 'Repository not found' }, { status: 404 });
        // Two pages, linked like the hub's paginated listings.
        const all = listing();
        const half = Math.ceil(all.length / 2);
        if (url.searchParams.get('cursor') === '2') return Response.json(all.slice(half));
        return Response.json(all.slice(0, half), {
          headers: { link: `<${url.origin}${url.pathname}?recursive=true&cursor=2>; rel="next"` },
        });
      }
      const resolve = /^\/(.+)\/resolve\/main\/(.+)$/.exec(url.pathname);
      if (resolve && decodeURIComponent(resolve[1]!) === ID)
        return Response.redirect(`${url.origin}/cdn/${resolve[2]}`, 302);
      const cdn = /^\/cdn\/(.+)$/.exec(url.pathname);
      if (cdn) {
        const path = decodeURIComponent(cdn[1]!);
        const file = join(source, path);
        if (!existsSync(file)) return new Response('not found', { status: 404 });
        const data = new Uint8Array(readFileSync(file));
        if (corrupt.has(path)) data[data.length >> 1]! ^= 0xff;
        return new Response(data);
      }
      return new Response('not found', { status: 404 });
    },
  });
});
afterAll(() => {
  hub.stop(true);
  rmSync(tmp, { recursive: true, force: true });
});

const endpoint = () => `http://127.0.0.1:${hub.port}`;

describe('models pull (against a local server that mimics the Hugging Face hub)', () => {
  test('fetches the needed files, verifies them, and the model then loads offline and transcribes', async () => {
    const modelsDir = join(tmp, 'models-ok');
    const { dir, files } = await pullWhisperModel({ id: ID, modelsDir, endpoint: endpoint() });
    expect(dir).toBe(join(modelsDir, ID));
    const paths = files.map((f) => f.path);
    for (const f of whisperRequiredFiles()) expect(paths).toContain(f);
    expect(paths).not.toContain('README.md');
    expect(paths.at(-1)).toBe('config.json');
    expect(files.find((f) => f.path.endsWith('.onnx'))!.verified).toBe('sha256');
    expect(files.find((f) => f.path === 'tokenizer.json')!.verified).toBe('git-sha1');
    for (const f of files) expect(readFileSync(join(dir, f.path))).toEqual(readFileSync(join(source, f.path)));
    expect(readdirSync(join(dir, 'onnx')).some((n) => n.endsWith('.part'))).toBe(false);

    const stt = createSpeechToText({ type: 'auto', modelsDir, model: ID });
    expect(stt.info.name).toBe(`whisper:${ID}`);
    const pieces = await stt.transcribe(new Float32Array(16000 * 2), { signal: new AbortController().signal });
    expect(pieces.map((p) => p.text)).toEqual([TINY_WHISPER_TEXT]);
    await stt.close?.();

    // A second pull finds everything intact and downloads nothing.
    requests.length = 0;
    const again = await pullWhisperModel({ id: ID, modelsDir, endpoint: endpoint() });
    expect(again.files.every((f) => !f.downloaded)).toBe(true);
    expect(requests.filter((r) => r.startsWith('/cdn/'))).toHaveLength(0);
  });

  test('a corrupt weight file is refused, and the half-pulled model is not picked up by "auto"', async () => {
    const modelsDir = join(tmp, 'models-bad');
    corrupt.add('onnx/decoder_model_merged_quantized.onnx');
    try {
      const err = await pullWhisperModel({ id: ID, modelsDir, endpoint: endpoint() }).then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.message).toContain('onnx/decoder_model_merged_quantized.onnx is corrupt');
      expect(err?.message).toContain('sha256');
    } finally {
      corrupt.clear();
    }
    const dir = join(modelsDir, ID);
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
    expect(existsSync(join(dir, 'onnx', 'decoder_model_merged_quantized.onnx'))).toBe(false);
    expect(readdirSync(join(dir, 'onnx')).some((n) => n.endsWith('.part'))).toBe(false);
    expect(createSpeechToText({ type: 'auto', modelsDir, model: ID }).info.name).toBe('none');
  });

  test('an unknown model, or one without the requested precision, fails with a sentence', async () => {
    const modelsDir = join(tmp, 'models-missing');
    const unknown = await pullWhisperModel({ id: 'acme/nope', modelsDir, endpoint: endpoint() }).then(
      () => null,
      (e: Error) => e,
    );
    expect(unknown?.message).toBe('the hub has no model acme/nope at revision main');
    const noFp16 = await pullWhisperModel({
      id: ID,
      modelsDir,
      endpoint: endpoint(),
      dtype: { encoder_model: 'fp16', decoder_model_merged: 'q8' },
    }).then(
      () => null,
      (e: Error) => e,
    );
    expect(noFp16?.message).toContain('has no onnx/encoder_model_fp16.onnx');
    const bad = await pullWhisperModel({ id: '../etc', modelsDir, endpoint: endpoint() }).then(
      () => null,
      (e: Error) => e,
    );
    expect(bad?.message).toContain('not a Hugging Face model id');
  });

  test('an unreachable hub says that a network connection is needed', async () => {
    const err = await pullWhisperModel({
      id: ID,
      modelsDir: join(tmp, 'models-offline'),
      endpoint: 'http://127.0.0.1:9',
    }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).toContain('cannot be reached');
  });
});
