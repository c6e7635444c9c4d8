/**
 * The analyzers, chosen by config (`--analyzers`), in pipeline order. One switch, no folder scan:
 * a compiled executable cannot discover plugins at run time.
 */
import { analyzerNames, type Config } from '../config';
import type { Analyzer } from './contracts';
import { EmbeddingsAnalyzer } from './embeddings';
import { ObjectsAnalyzer } from './objects';
import { OcrAnalyzer } from './ocr';
import { SpeechAnalyzer } from './speech';
import { createSpeechToText } from './stt';
import { DEFAULT_VISUAL, VisualAnalyzer } from './visual';

export function createAnalyzers(config: Config): Analyzer[] {
  return analyzerNames(config.analyzers).map((name): Analyzer => {
    switch (name) {
      case 'visual':
        return new VisualAnalyzer({ ...DEFAULT_VISUAL, frameIntervalSec: config.frameIntervalSec });
      case 'ocr':
        return new OcrAnalyzer();
      case 'objects':
        return new ObjectsAnalyzer();
      case 'speech':
        return new SpeechAnalyzer({ stt: createSpeechToText({ type: config.sttEngine as 'auto' | 'whisper' | 'none', modelsDir: config.modelsDir, model: config.whisperModel }) });
      case 'embeddings':
        return new EmbeddingsAnalyzer();
    }
  });
}
