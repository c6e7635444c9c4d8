/**
 * --analysis-effort (issue 35): the option itself, what each effort sets, and the cheap change
 * tests the balanced effort decides with (per-region picture changes, text boxes whose pixels
 * changed, the person hints the objects stage gives the faces stage).
 */
import { describe, expect, test } from 'bun:test';
import { FrameHints } from '../../src/analysis/frame-hints';
import { regionDifference, rectIou, type Image } from '../../src/analysis/engines/ocr-geometry';
import { DEFAULT_FACES, FACES_EFFORT } from '../../src/analysis/stages/faces';
import { DEFAULT_OBJECTS, isUnchangedOutside, mayShowFace, OBJECTS_EFFORT } from '../../src/analysis/stages/objects';
import { DEFAULT_OCR, OCR_EFFORT } from '../../src/analysis/stages/ocr';
import { loadConfig } from '../../src/config';
import { ConfigError } from '../../src/options';
import type { AnalysisEffort } from '../../src/analysis/effort';

const effortOptions = (e: AnalysisEffort) => ({
  objects: OBJECTS_EFFORT[e],
  faces: FACES_EFFORT[e],
  ocr: OCR_EFFORT[e],
});

describe('--analysis-effort', () => {
  test('balanced is the default; the flag and VIDQ_ANALYSIS_EFFORT choose another; a wrong value is refused', () => {
    expect(loadConfig({}, {}).analysisEffort).toBe('balanced');
    expect(loadConfig({ 'analysis-effort': 'thorough' }, {}).analysisEffort).toBe('thorough');
    expect(loadConfig({}, { VIDQ_ANALYSIS_EFFORT: 'fast' }).analysisEffort).toBe('fast');
    expect(() => loadConfig({ 'analysis-effort': 'max' }, {})).toThrow(ConfigError);
  });

  test("thorough sets every stage's options to the stage's own defaults (the behaviour before efforts)", () => {
    const t = effortOptions('thorough');
    const differs = (set: object, defaults: object) =>
      Object.entries(set).filter(([k, v]) => (defaults as Record<string, unknown>)[k] !== v);
    expect(differs(t.objects, DEFAULT_OBJECTS)).toEqual([]);
    expect(differs(t.faces, DEFAULT_FACES)).toEqual([]);
    expect(differs(t.ocr, DEFAULT_OCR)).toEqual([]);
    // Before efforts: objects reused a look-alike frame for the whole shot, faces read every frame.
    expect(DEFAULT_OBJECTS.keepAliveSec).toBe(0);
    expect(DEFAULT_FACES.skipUnchanged || DEFAULT_FACES.personGate || DEFAULT_OCR.reuseLines).toBe(false);
  });

  test('balanced and fast skip work that thorough does', () => {
    for (const e of ['balanced', 'fast'] as const) {
      const o = effortOptions(e);
      expect(o.faces.skipUnchanged && o.faces.personGate && o.ocr.reuseLines).toBe(true);
      expect(o.objects.keepAliveSec).toBeGreaterThan(0);
    }
    // Balanced keeps everything thorough finds (bench/quality-diff): no smaller detector input, no
    // OCR glance that misses small text.
    expect(effortOptions('balanced').objects.inputLongSide).toBe(DEFAULT_OBJECTS.inputLongSide);
    expect(effortOptions('balanced').ocr.screenKeptFrames).toBe(false);
    expect(effortOptions('fast').ocr.screenKeptFrames).toBe(true);
  });
});

describe('change tests', () => {
  const GRID = 32;
  const still = () => new Float32Array(GRID * GRID).fill(100);

  test('a picture that changed only inside a given box counts as unchanged outside it', () => {
    const a = still();
    const talking = a.slice();
    // A face in the middle: cells 12..19 × 8..15 change a lot.
    for (let y = 8; y < 16; y++) for (let x = 12; x < 20; x++) talking[y * GRID + x] = 180;
    const face: [number, number, number, number] = [12 / GRID, 8 / GRID, 8 / GRID, 8 / GRID];
    expect(isUnchangedOutside(a, talking, [face])).toBe(true);
    // Without the box the same change is a change…
    expect(isUnchangedOutside(a, talking, [])).toBe(false);
    // …and so is someone walking in beside it.
    const walkIn = talking.slice();
    for (let y = 4; y < 28; y++) walkIn[y * GRID + 2] = 30;
    expect(isUnchangedOutside(a, walkIn, [face])).toBe(false);
  });

  test('a text box changed by one letter differs; the same box with compression noise does not', () => {
    const w = 200;
    const h = 40;
    const img = (): Image => ({ data: new Uint8Array(w * h * 4).fill(255), width: w, height: h });
    const a = img();
    const letter = (im: Image, x0: number) => {
      for (let y = 10; y < 30; y++)
        for (let x = x0; x < x0 + 4; x++) im.data.fill(0, (y * w + x) * 4, (y * w + x) * 4 + 3);
    };
    for (let x = 20; x < 180; x += 12) letter(a, x);
    const noisy = {
      ...a,
      data: a.data.map((v, i) => (i % 4 === 3 ? v : Math.max(0, Math.min(255, v + ((i * 7) % 5) - 2)))),
    };
    const changed = { ...a, data: a.data.slice() };
    letter(changed, 26);
    const box: [number, number, number, number] = [10, 5, 190, 35];
    expect(regionDifference(a, noisy, box)).toBeLessThan(DEFAULT_OCR.duplicateThreshold);
    expect(regionDifference(a, changed, box)).toBeGreaterThan(DEFAULT_OCR.duplicateThreshold * 2);
    expect(rectIou(box, [12, 6, 190, 35])).toBeGreaterThan(0.8);
    expect(rectIou(box, [100, 5, 290, 35])).toBeLessThan(0.5);
  });

  test('a person candidate or a half-seen body may show a face; an empty frame not', () => {
    expect(mayShowFace({ objects: [{ label: 'person', score: 0.16, box: [0, 0, 1, 1] }], body: null })).toBe(true);
    expect(mayShowFace({ objects: [], body: { score: 0.3, box: [0, 0, 1, 1] } })).toBe(true);
    expect(
      mayShowFace({
        objects: [{ label: 'dog', score: 0.9, box: [0, 0, 1, 1] }],
        body: { score: 0.1, box: [0, 0, 1, 1] },
      }),
    ).toBe(false);
  });

  test('person hints: a frame waits for its word; without a telling stage (or once it ends) the answer is unknown', async () => {
    const none = new FrameHints(false);
    expect(await none.person(3)).toBeUndefined();
    const h = new FrameHints(true);
    const asked = h.person(6);
    h.setPerson(3, false);
    expect(await h.person(3)).toBe(false);
    h.setPerson(6, true);
    expect(await asked).toBe(true);
    const late = h.person(9);
    h.close();
    expect(await late).toBeUndefined();
  });
});
