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

 * The option is one, shared by the three stages' descriptors; each stage owns what an effort means
 * for it (its `*_EFFORT` table: objects.ts, faces.ts, ocr.ts).
 */
import { oneOf } from '../options';

export const ANALYSIS_EFFORTS = ['thorough', 'balanced', 'fast'] as const;
export type AnalysisEffort = (typeof ANALYSIS_EFFORTS)[number];

/** `--analysis-effort`, declared by the objects, faces and OCR descriptors (one option, merged). */
export const EFFORT_OPTIONS = {
  analysisEffort: oneOf(
    'analysis-effort',
    ANALYSIS_EFFORTS,
    'balanced',
    'thorough (models on every sampled frame, as before) | balanced (models where the picture changed) | fast (loses some findings)',
  ),
};
