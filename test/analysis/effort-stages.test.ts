/**
 * The balanced effort on real clips (issue 35): the objects stage tells the faces stage which frames
 * may show a person, and the faces stage leaves its models off the others and off frames where
 * nothing moved outside the last faces, while finding the same faces as thorough.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import type { StageContext, StageResult } from '../../src/analysis/contracts';
import { FrameHints } from '../../src/analysis/frame-hints';
import { FACES_EFFORT, FacesAnalyzer } from '../../src/analysis/stages/faces';
import { OBJECTS_EFFORT, ObjectsAnalyzer } from '../../src/analysis/stages/objects';
import { clip } from '../helpers';
import { removeContexts, visualContext } from './faces-context';

const objects = new ObjectsAnalyzer(OBJECTS_EFFORT.balanced);
const balancedFaces = new FacesAnalyzer(FACES_EFFORT.balanced);
const thoroughFaces = new FacesAnalyzer(FACES_EFFORT.thorough);

afterAll(() => {
  objects.close();
  balancedFaces.close();
  thoroughFaces.close();
  removeContexts();
});

/** Objects and faces side by side, as the pipeline runs them, sharing one FrameHints. */
async function objectsAndFaces(ctx: StageContext, faces: FacesAnalyzer): Promise<StageResult> {
  const hints = new FrameHints(true);
  const withHints = { ...ctx, hints };
  const [, found] = await Promise.all([objects.run(withHints).finally(() => hints.close()), faces.run(withHints)]);
  return found;
}

describe('balanced faces', () => {
  test('bottles (nobody in it): the face models skip the frames without a person candidate, and find nothing, as thorough', async () => {
    const ctx = await visualContext(clip('bottles.mp4'));
    const balanced = await objectsAndFaces(ctx, balancedFaces);
    const thorough = await thoroughFaces.run(ctx);
    expect(thorough.segments).toEqual([]);
    expect(balanced.segments).toEqual([]);
    expect(thorough.summary!.analysed_frames).toBe(thorough.summary!.frames);
    // Some frames have a faint person candidate (a bottle at 0.15–0.3) and are read all the same.
    expect(Number(balanced.summary!.no_person_frames)).toBeGreaterThan(0);
    expect(Number(balanced.summary!.analysed_frames) + Number(balanced.summary!.no_person_frames)).toBe(
      Number(balanced.summary!.frames),
    );
  }, 120_000);

  test('talking-head: the same one appearance over the whole clip as thorough', async () => {
    const ctx = await visualContext(clip('talking-head.mp4'));
    const balanced = await objectsAndFaces(ctx, balancedFaces);
    const thorough = await thoroughFaces.run(ctx);
    expect(thorough.segments!.length).toBe(1);
    expect(balanced.segments!.map((s) => [s.start, s.end])).toEqual(thorough.segments!.map((s) => [s.start, s.end]));
    expect(balanced.summary!.analysed_frames).toBeGreaterThan(0);
    expect(Number(balanced.summary!.analysed_frames)).toBeLessThanOrEqual(Number(thorough.summary!.frames));
  }, 120_000);
});
