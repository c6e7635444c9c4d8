/**
 * The analyzers, chosen by config (`--analyzers`), in pipeline order. One switch, no folder scan:
 * a compiled executable cannot discover plugins at run time.
 */
import type { Config } from '../config';
import type { Analyzer } from './contracts';
import { EmbeddingsAnalyzer } from './embeddings';
import { SpeechAnalyzer } from './speech';
import { createSpeechToText } from './stt';
import { DEFAULT_VISUAL, VisualAnalyzer } from './visual';

export const ANALYZER_NAMES = ['visual', 'speech', 'embeddings'] as const;

export function createAnalyzers(config: Config): Analyzer[] {
  const names = config.analyzers
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const out: Analyzer[] = [];
  for (const name of names) {
    switch (name) {
      case 'visual':
        out.push(new VisualAnalyzer({ ...DEFAULT_VISUAL, frameIntervalSec: config.frameIntervalSec }));
        break;
      case 'speech':
        out.push(new SpeechAnalyzer({ stt: createSpeechToText({ type: config.sttEngine as 'auto' | 'whisper' | 'none', modelsDir: config.modelsDir, model: config.whisperModel }) }));
        break;
      case 'embeddings':
        // Last: it embeds the segments every earlier stage stored.
        break;
      default:
        // Analyzers not built yet are skipped with a warning by the caller (see unknownAnalyzers).
        break;
    }
  }
  if (names.includes('embeddings')) out.push(new EmbeddingsAnalyzer());
  if (!out.some((a) => a.stage === 'analyzing:visual')) out.unshift(new VisualAnalyzer({ ...DEFAULT_VISUAL, frameIntervalSec: config.frameIntervalSec }));
  return out;
}

export function unknownAnalyzers(config: Config): string[] {
  return config.analyzers
    .split(',')
    .map((s) => s.trim())
    .filter((n) => n && !(ANALYZER_NAMES as readonly string[]).includes(n));
}
