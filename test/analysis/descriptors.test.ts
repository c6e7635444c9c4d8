/**
 * Analyzers are declared once, each by the descriptor its module exports: the `--analyzers` names,
 * what may be reanalysed, what runs on live windows, the config's analyzer options and engine
 * sections all come from the descriptors. Captions are an analyzer like the others, on when a
 * captioner is configured rather than named in --analyzers, and reanalysable.
 */
import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAnalyzers } from '../../src/analysis';
import { ANALYZER_NAMES, ANALYZERS, analyzerNames, LIVE_ANALYZERS, REANALYZABLE } from '../../src/analysis/analyzers';
import { describeOptions, loadConfig } from '../../src/config';
import { ReanalyzeService } from '../../src/jobs/reanalyze';
import { Limiter } from '../../src/analysis/engines/model-server/client';
import { CaptionAnalyzer, type CaptionOptions } from '../../src/analysis/stages/captions';

const dir = mkdtempSync(join(tmpdir(), 'vidq-descriptors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const config = (flags: Record<string, string> = {}) => loadConfig({ 'data-dir': dir, ...flags }, {});
/** A captioner at an address nothing listens on: making the analyzer sends no request. */
const CAPTIONER = { captioner: 'openai', 'captioner-url': 'http://127.0.0.1:9', 'captioner-model': 'stand-in-vision' };
const modelLimiter = new Limiter(4);
const stagesOf = (list: { stage: string }[]) => list.map((a) => a.stage.replace(/^analyzing:/, ''));

test('every list of analyzers is derived from the descriptors, in pipeline order', () => {
  const names = ANALYZERS.map((d) => d.name);
  expect(new Set(names).size).toBe(names.length);
  expect(names[0]).toBe('visual');
  expect(names.at(-1)).toBe('embeddings');
  expect(names.indexOf('captions')).toBe(names.length - 2);
  expect(ANALYZER_NAMES).toEqual(['visual', 'ocr', 'objects', 'faces', 'speech', 'subtitles', 'embeddings']);
  expect(REANALYZABLE).toEqual(['ocr', 'objects', 'speech', 'captions', 'embeddings']);
  expect(LIVE_ANALYZERS).toEqual(['ocr', 'objects', 'faces', 'speech', 'captions']);
  // The default of --analyzers is every analyzer it can name.
  expect(config().analyzers.split(',')).toEqual([...ANALYZER_NAMES]);
  expect(() => analyzerNames('visual,captions')).toThrow(/unknown analyzer\(s\) captions; choose from visual, ocr/);
});

test('each descriptor makes the stage of its name; captions only with a captioner configured', () => {
  const plain = createAnalyzers(config(), { modelLimiter });
  expect(stagesOf(plain)).toEqual([...ANALYZER_NAMES]);
  const withCaptions = createAnalyzers(config(CAPTIONER), { modelLimiter });
  expect(stagesOf(withCaptions)).toEqual(ANALYZERS.map((d) => d.name));
  // --analyzers picks the named ones (and visual); captions come with their engine whatever it lists.
  expect(stagesOf(createAnalyzers(config({ ...CAPTIONER, analyzers: 'speech,embeddings' }), { modelLimiter }))).toEqual(
    ['visual', 'speech', 'captions', 'embeddings'],
  );
  // Live windows: only the live analyzers are made.
  expect(stagesOf(createAnalyzers(config(CAPTIONER), { modelLimiter, live: true }))).toEqual([...LIVE_ANALYZERS]);
  expect(stagesOf(createAnalyzers(config(), { modelLimiter, live: true }))).toEqual([
    'ocr',
    'objects',
    'faces',
    'speech',
  ]);
});

test('every reanalysable name is a stage the server can plan; captions without a captioner is refused with the reason', () => {
  const planner = (flags: Record<string, string>) =>
    new ReanalyzeService({
      // plan() reads only the configured stages.
      catalog: undefined as never,
      queue: undefined as never,
      stages: () => createAnalyzers(config(flags), { modelLimiter }),
      workers: 1,
    });
  const all = planner(CAPTIONER);
  for (const name of REANALYZABLE) {
    const planned = stagesOf(all.plan({}, [name]));
    expect(planned[0]).toBe(name);
    // New segments get their vectors.
    expect(planned.at(-1)).toBe('embeddings');
  }
  expect(() => planner({}).plan({}, ['captions'])).toThrow(
    'captions is not configured on this server (captions need --captioner openai)',
  );
  expect(() => all.plan({}, ['visual'])).toThrow(
    /unknown "visual"; choose from ocr, objects, speech, captions, embeddings/,
  );
});

test("an analyzer's options and engine are its own, and reach the config with the same flags and variables", () => {
  const visual = ANALYZERS.find((d) => d.name === 'visual')!;
  expect(Object.values(visual.options).map((o) => o.flag)).toEqual([
    'frame-interval-sec',
    'max-frames-per-video',
    'max-frame-pixels',
    'max-frame-bytes-per-video',
  ]);
  expect(Object.keys(ANALYZERS.find((d) => d.name === 'speech')!.engines)).toEqual(['stt']);
  expect(Object.keys(ANALYZERS.find((d) => d.name === 'captions')!.engines)).toEqual(['captioner']);
  expect(Object.keys(ANALYZERS.find((d) => d.name === 'embeddings')!.engines)).toEqual(['embedder']);
  const c = loadConfig({ 'data-dir': dir, 'frame-interval-sec': '9' }, { VIDQ_MAX_FRAME_PIXELS: '1000' });
  expect(c.frameIntervalSec).toBe(9);
  expect(c.maxFramePixels).toBe(1000);
  expect(c.maxFramesPerVideo).toBe(7200);
  expect(loadConfig({ 'data-dir': dir, stt: 'none' }, {}).stt).toEqual({ type: 'none' });
  const help = describeOptions();
  expect(help).toContain('--frame-interval-sec N');
  expect(help).toContain('[VIDQ_FRAME_INTERVAL_SEC]');
  expect(help).toContain('--captioner VALUE');
});

test('model-server clients use the limiter the composition root hands in (two in one process stay two)', () => {
  const one = new Limiter(1);
  const three = new Limiter(3);
  const clientOf = (limiter: Limiter) => {
    const captions = createAnalyzers(config(CAPTIONER), { modelLimiter: limiter }).find(
      (a) => a instanceof CaptionAnalyzer,
    );
    // The analyzer keeps its client private: read it as the stage does.
    return (captions as unknown as { opts: CaptionOptions }).opts.client;
  };
  const a = clientOf(one);
  const b = clientOf(three);
  expect(a.concurrency).toBe(1);
  expect(b.concurrency).toBe(3);
  // Before, a process-wide limiter replaced itself when the size changed: the first client's limit
  // then no longer bounded the second's requests.
  expect((a as unknown as { opts: { limiter: Limiter } }).opts.limiter).toBe(one);
  expect((b as unknown as { opts: { limiter: Limiter } }).opts.limiter).toBe(three);
});
