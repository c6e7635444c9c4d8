/**
 * The analyzers, in pipeline order: visual first (the others read its frames), subtitles after
 * speech (both store transcripts, each replacing only its own), captions before the embeddings,
 * embeddings last (it embeds what the others stored). One list, no folder scan (a compiled
 * executable cannot discover plugins at run time); each entry is the descriptor its module
 * exports, and every other list (--analyzers, reanalysable, live) is derived from it here.
 */
import { ConfigError } from '../options';
import { captionsDescriptor } from './stages/captions';
import { embeddingsDescriptor } from './stages/embeddings';
import { facesDescriptor } from './stages/faces';
import { objectsDescriptor } from './stages/objects';
import { ocrDescriptor } from './stages/ocr';
import { speechDescriptor } from './stages/speech';
import { subtitlesDescriptor } from './stages/subtitles';
import { visualDescriptor } from './stages/visual';

export const ANALYZERS = [
  visualDescriptor,
  ocrDescriptor,
  objectsDescriptor,
  facesDescriptor,
  speechDescriptor,
  subtitlesDescriptor,
  captionsDescriptor,
  embeddingsDescriptor,
] as const;

export type AnalyzerName = (typeof ANALYZERS)[number]['name'];

/** The names `--analyzers` takes (captions come with a configured captioner instead). */
export const ANALYZER_NAMES: readonly AnalyzerName[] = ANALYZERS.filter((a) => a.listed).map((a) => a.name);
/** What `POST /videos/{id}/reanalyze` may run again (not visual: every other stage reads its frames). */
export const REANALYZABLE: readonly AnalyzerName[] = ANALYZERS.filter((a) => a.reanalyzable).map((a) => a.name);
/** What also runs on the windows of live streams. */
export const LIVE_ANALYZERS: readonly AnalyzerName[] = ANALYZERS.filter((a) => a.live).map((a) => a.name);

/** What is wrong with an `--analyzers` value, if anything. */
export function unknownAnalyzers(analyzers: string): string | undefined {
  const unknown = analyzers
    .split(',')
    .map((s) => s.trim())
    .filter((n) => n && !(ANALYZER_NAMES as readonly string[]).includes(n));
  if (unknown.length)
    return `names unknown analyzer(s) ${unknown.join(', ')}; choose from ${ANALYZER_NAMES.join(', ')}`;
}

/**
 * The analyzers a config runs, in pipeline order: those `--analyzers` names (visual always: every
 * other one works from its frames) and those on by their engine (captions).
 */
export function analyzerNames(analyzers: string): AnalyzerName[] {
  const wrong = unknownAnalyzers(analyzers);
  if (wrong) throw new ConfigError(`--analyzers ${wrong}`);
  const names = analyzers.split(',').map((s) => s.trim());
  return ANALYZERS.filter((a) => a.name === 'visual' || !a.listed || names.includes(a.name)).map((a) => a.name);
}
