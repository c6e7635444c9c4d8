/**
 * The configuration's engine sections (generator, captioner, stt, embedder: each a `type` and the
 * options of that type), and the flat flags, variables and file keys of earlier releases that fill them.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  configParseOptions,
  describeOptions,
  loadConfig,
  secretEnv,
  whisperModelOf,
  withSecrets,
  type Config,
} from '../src/config';

const made: string[] = [];
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));
/** A data directory holding `config.json` with `file` in it. */
const withFile = (file: unknown) => {
  const d = mkdtempSync(join(tmpdir(), 'cfg-engines-'));
  made.push(d);
  writeFileSync(join(d, 'config.json'), JSON.stringify(file));
  return d;
};

/** Every flag of the release before engine sections (users have them in scripts). */
const OLD_FLAGS =
  'host port data-dir allow-private-urls max-download-bytes connect-timeout-ms idle-timeout-ms max-redirects max-duration-sec large-file-bytes inquire-cost default-credits anonymous-listing media-link-ttl-sec upload-url-ttl-sec purge-after-days stuck-after-minutes maintenance-cron max-body-bytes max-image-body-bytes webhook-url webhook-retry-ms max-upload-bytes min-free-bytes analysis-workers short-lane-sec max-analyses-per-user worker-recycle-sec worker-idle-release-sec analyzers live-max-streams-per-user live-max-fps-per-user live-fps live-retention-sec live-stall-sec live-segment-sec frame-interval-sec stt models-dir whisper-model generator generator-url generator-model generator-api-key generator-vision generator-timeout-ms log-level captioner captioner-url captioner-model caption-interval-sec stt-url stt-model model-timeout-ms model-concurrency model-retries embedder embedder-url embedder-model ollama allowed-hosts public-url download-deadline-ms min-download-rate max-downloads user-max-downloads user-max-storage-bytes user-max-queued max-frames-per-video max-frame-pixels max-frame-bytes-per-video analysis-sec-per-minute analysis-budget-base-sec'.split(
    ' ',
  );

describe('engine sections', () => {
  test('a config file with one section per engine gives typed sections; flags and variables still override', () => {
    const dir = withFile({
      generator: { type: 'openai', url: 'http://gpu:11434', model: 'llama3.1', vision: true },
      captioner: { type: 'openai', url: 'http://gpu:8001/v1', model: 'qwen2.5vl', apiKey: 'sk-cap', intervalSec: 4 },
      stt: { type: 'whisper', model: 'onnx-community/whisper-small' },
      embedder: { type: 'use' },
      port: 9000,
    });
    const c = loadConfig({ 'data-dir': dir, 'captioner-model': 'qwen2.5vl:7b' }, { VIDQ_GENERATOR_TIMEOUT_MS: '900' });
    expect(c.generator).toEqual({
      type: 'openai',
      url: 'http://gpu:11434',
      model: 'llama3.1',
      vision: true,
      timeoutMs: 900, // environment over file
    } as Config['generator']);
    expect(c.captioner).toEqual({
      type: 'openai',
      url: 'http://gpu:8001/v1',
      model: 'qwen2.5vl:7b', // flag over file
      intervalSec: 4,
    } as Config['captioner']);
    expect(c.stt).toEqual({ type: 'whisper', model: 'onnx-community/whisper-small' });
    expect(c.embedder).toEqual({ type: 'use' });
    expect(c.port).toBe(9000);
    // A key from the file is readable, never serialised.
    expect(c.captioner.type === 'openai' && c.captioner.apiKey).toBe('sk-cap');
    expect(JSON.stringify(c)).not.toContain('sk-cap');
    expect(Bun.inspect(c)).not.toContain('sk-cap');
    // A flag that picks another type drops the file's options of the old one.
    expect(loadConfig({ 'data-dir': dir, stt: 'none' }, {}).stt).toEqual({ type: 'none' });
  });

  test('the flat flags, variables and file keys of earlier releases fill the sections', () => {
    const parsed = configParseOptions();
    for (const flag of OLD_FLAGS) expect(parsed[flag]).toBeDefined();
    const help = describeOptions();
    for (const flag of OLD_FLAGS) expect(help).toContain(`VIDQ_${flag.toUpperCase().replaceAll('-', '_')}]`);

    const flags = loadConfig(
      {
        'data-dir': withFile({}),
        captioner: 'openai',
        'captioner-url': 'http://127.0.0.1:11434',
        'captioner-model': 'qwen2.5vl',
        'caption-interval-sec': '3',
        embedder: 'openai',
        'embedder-url': 'http://127.0.0.1:11434',
        'embedder-model': 'nomic-embed-text',
        'whisper-model': 'ignored/while-stt-is-openai',
      },
      {
        VIDQ_STT: 'openai',
        VIDQ_STT_URL: 'http://127.0.0.1:8000',
        VIDQ_STT_MODEL: 'whisper-1',
        VIDQ_STT_API_KEY: 'sk-stt',
        VIDQ_EMBEDDER_API_KEY: 'sk-emb',
      },
    );
    expect(flags.captioner).toEqual({
      type: 'openai',
      url: 'http://127.0.0.1:11434',
      model: 'qwen2.5vl',
      intervalSec: 3,
    } as Config['captioner']);
    expect(flags.stt).toEqual({ type: 'openai', url: 'http://127.0.0.1:8000', model: 'whisper-1' } as Config['stt']);
    expect(flags.stt.type === 'openai' && flags.stt.apiKey).toBe('sk-stt');
    expect(flags.embedder.type === 'openai' && flags.embedder.model).toBe('nomic-embed-text');
    expect(flags.embedder.type === 'openai' && flags.embedder.apiKey).toBe('sk-emb');

    // Old config files: flat camelCase keys, `sttEngine`, or the flag names.
    const file = loadConfig(
      {
        'data-dir': withFile({
          generator: 'transformers',
          generatorModel: 'onnx-community/Qwen2.5-0.5B-Instruct',
          generatorTimeoutMs: 30000,
          sttEngine: 'whisper',
          whisperModel: 'onnx-community/whisper-tiny.en',
          'caption-interval-sec': 7,
          anonymousListingOnLoopback: false,
        }),
      },
      {},
    );
    expect(file.generator).toEqual({
      type: 'transformers',
      model: 'onnx-community/Qwen2.5-0.5B-Instruct',
      timeoutMs: 30000,
    });
    expect(file.stt).toEqual({ type: 'whisper', model: 'onnx-community/whisper-tiny.en' });
    expect(file.captioner).toEqual({ type: 'none' }); // the interval is kept for a captioner, not shown without one
    expect(file.anonymousListingOnLoopback).toBe(false);
    // `vidq models pull` still fetches --whisper-model while another engine transcribes.
    const pull = loadConfig(
      { 'data-dir': withFile({}), stt: 'none', 'whisper-model': 'onnx-community/whisper-tiny' },
      {},
    );
    expect(whisperModelOf(pull)).toBe('onnx-community/whisper-tiny');
    expect(whisperModelOf(file)).toBe('onnx-community/whisper-tiny.en');
  });

  test('a bad type, an option the type does not take, or a missing one is refused with a clear message', () => {
    const load =
      (flags: Record<string, string>, file: unknown = {}) =>
      () =>
        loadConfig({ 'data-dir': withFile(file), ...flags }, {});
    expect(load({ captioner: 'gpt' })).toThrow('--captioner must be none, openai; got "gpt"');
    expect(load({}, { stt: { type: 'deepgram' } })).toThrow(
      /"stt.type" must be auto, whisper, openai, none; got "deepgram"/,
    );
    expect(load({}, { embedder: 'bert' })).toThrow(/"embedder" must be use, openai; got "bert"/);
    expect(load({}, { generator: { type: 'none', url: 'http://h:1' } })).toThrow(
      /"generator.url" is not an option of generator type "none" \(it takes: type, timeoutMs\)/,
    );
    expect(load({}, { captioner: { type: 'openai', url: 'http://h:1' } })).toThrow(
      '--captioner openai needs --captioner-model (config file: "captioner.model"), a vision model the server serves',
    );
    expect(load({}, { embedder: { type: 'openai', url: 'http://u:p@h:1', model: 'm' } })).toThrow(
      /"embedder.url" must not carry credentials; set VIDQ_EMBEDDER_API_KEY instead/,
    );
    expect(load({ stt: 'openai', 'stt-model': 'whisper-1' })).toThrow(/--stt openai needs --stt-url/);
  });

  test('the analysis worker gets the config as JSON and the keys through its environment', () => {
    const c = loadConfig(
      {
        'data-dir': withFile({}),
        captioner: 'openai',
        'captioner-url': 'http://127.0.0.1:11434',
        'captioner-model': 'qwen2.5vl',
      },
      { VIDQ_CAPTIONER_API_KEY: 'sk-cap' },
    );
    const json = JSON.stringify(c);
    expect(json).not.toContain('sk-cap');
    expect(secretEnv(c)).toEqual({ VIDQ_CAPTIONER_API_KEY: 'sk-cap' });
    const inWorker = withSecrets(JSON.parse(json) as Config, secretEnv(c));
    expect(inWorker).toEqual(c);
    expect(inWorker.captioner.type === 'openai' && inWorker.captioner.apiKey).toBe('sk-cap');
    expect(JSON.stringify(inWorker)).toBe(json);
  });

  test('the documentation (README.md and docs/) names every flag, and only src/config.ts reads the environment', () => {
    const root = join(import.meta.dir, '..');
    const readme = [join(root, 'README.md'), ...readdirSync(join(root, 'docs')).map((f) => join(root, 'docs', f))]
      .filter((f) => f.endsWith('.md'))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    for (const flag of Object.keys(configParseOptions()))
      if (!flag.startsWith('no-'))
        expect({ flag, inReadme: readme.includes(`--${flag}`) }).toEqual({ flag, inReadme: true });
    const src = join(import.meta.dir, '..', 'src');
    const readers: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (
          /\.ts$/.test(name) &&
          path !== join(src, 'config.ts') &&
          /process\.env|Bun\.env/.test(readFileSync(path, 'utf8'))
        )
          readers.push(path.slice(src.length + 1));
      }
    };
    walk(src);
    expect(readers).toEqual([]);
  });
});
