/**
 * `--analysis-effort`: how much model work each sampled frame gets (issue 35).
 *
 * - `thorough`: the objects, faces and OCR models look at every sampled frame as they always did
 *   (objects and OCR reuse the result of a frame that looks the same as the last one they read in
 *   the same shot; faces read every frame).
 * - `balanced` (the default): the models work only where the picture changed. Objects reuse the
 *   last detected frame of the shot while the picture is the same (as thorough does); faces reuse
 *   the last read frame's faces while nothing changed outside them (a face talking), and are not
 *   looked for where the objects stage sees no person and the last read frame had no face; OCR
 *   reads again only the text boxes that are new or whose pixels changed (the detector, the cheap
 *   part, still runs). Objects detect again after 60 s of reuse and faces after 30 s, so a slow
 *   change is still seen (a keep-alive of 15 s made a parked camera's object detections ten times
 *   as many, measured: 32 of 62 frames against 3).
 * - `fast`: as balanced, with longer keep-alives, twice the changed cells allowed for objects, what
 *   changes inside a detected person ignored by objects, a 384-px object-detector input, and kept
 *   frames read by OCR only where a glance at a quarter of the pixels sees text. It loses findings,
 *   measured over the 14 shared clips against thorough: a frisbee thrown in a person's hands, a
 *   potted plant and a chair gone, motorcycles 12 % of their seconds, a small watermark's text.

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
        objects: { keepAliveSec: 60, ignoreInsidePeople: false, maxChangedCells: 8, inputLongSide: 512 },
        faces: { skipUnchanged: true, personGate: true, keepAliveSec: 30 },
        ocr: { reuseLines: true, screenKeptFrames: false },
      };
    case 'fast':
      return {
        objects: { keepAliveSec: 120, ignoreInsidePeople: true, maxChangedCells: 16, inputLongSide: 384 },
        faces: { skipUnchanged: true, personGate: true, keepAliveSec: 120 },
        ocr: { reuseLines: true, screenKeptFrames: true },
      };
  }
}
