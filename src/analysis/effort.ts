/**
 * `--analysis-effort`: how much model work each sampled frame gets (issue 35).
 *
 * - `thorough`: the objects, faces and OCR models look at every sampled frame as they always did
 *   (objects and OCR reuse the result of a frame that looks the same as the last one they read in
 *   the same shot; faces read every frame).
 * - `balanced` (the default): the models work only where the picture changed. Objects reuse the
 *   last detected frame of the shot while the picture is the same (as thorough does); faces reuse
 *   the last read frame's faces while nothing changed outside them (a face talking); faces are not looked for where the objects stage sees no person and the last read frame
 *   had no face; OCR reads again only the text boxes that are new or whose pixels changed (the
 *   detector, the cheap part, still runs), and reads a frame in full only where a quick look at a
 *   quarter of the pixels sees any text. Objects and faces detect again after a keep-alive of
 *   15 s of reuse, so a slow change is still seen.
 * - `fast`: as balanced, with longer keep-alives, twice the changed cells allowed for objects, and
 *   what changes inside a detected person ignored by objects (measured: a frisbee thrown in a
 *   person's hands was missed for 5 of its 10 s, which balanced must not do).
 *
 * Each stage owns its options; this only picks their values for an effort.
 */
import type { AnalysisEffort } from '../config';
import type { FacesOptions } from './stages/faces';
import type { ObjectsOptions } from './stages/objects';
import type { OcrOptions } from './stages/ocr';

export interface EffortOptions {
  objects: Partial<ObjectsOptions>;
  faces: Partial<FacesOptions>;
  ocr: Partial<OcrOptions>;
}

export function effortOptions(effort: AnalysisEffort): EffortOptions {
  switch (effort) {
    case 'thorough':
      return {
        objects: { keepAliveSec: 0, ignoreInsidePeople: false, maxChangedCells: 8, inputLongSide: 512 },
        faces: { skipUnchanged: false, personGate: false, keepAliveSec: 0 },
        ocr: { reuseLines: false, screenKeptFrames: false },
      };
    case 'balanced':
      return {
        objects: { keepAliveSec: 15, ignoreInsidePeople: false, maxChangedCells: 8, inputLongSide: 512 },
        faces: { skipUnchanged: true, personGate: true, keepAliveSec: 15 },
        ocr: { reuseLines: true, screenKeptFrames: false },
      };
    case 'fast':
      return {
        objects: { keepAliveSec: 30, ignoreInsidePeople: true, maxChangedCells: 16, inputLongSide: 384 },
        faces: { skipUnchanged: true, personGate: true, keepAliveSec: 60 },
        ocr: { reuseLines: true, screenKeptFrames: true },
      };
  }
}
