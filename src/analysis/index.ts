/**
 * The analyzers, chosen by config (`--analyzers`), in pipeline order. One switch, no folder scan:
 * a compiled executable cannot discover plugins at run time.
 */
import { join } from 'node:path';
import { analyzerNames, type Config } from '../config';
import { resolveBinaries } from '../media/binaries';
import type { AnalysisAssets } from './assets';
import type { Analyzer } from './contracts';
import { UseEmbedder } from './embedder';
import { EmbeddingsAnalyzer } from './embeddings';
import { FacesAnalyzer } from './faces';
import { ObjectsAnalyzer } from './objects';
import { OcrAnalyzer } from './ocr';
import { SpeechAnalyzer } from './speech';
import { createSpeechToText } from './stt';
import { SubtitlesAnalyzer } from './subtitles';
import { DEFAULT_VISUAL, VisualAnalyzer } from './visual';

/**
 * `assets` (from analysisAssets()) says where the models and wasm files are; the compiled
 * executable must pass it. Without it, each analyzer finds its files in node_modules.
 */
export function createAnalyzers(config: Config, assets?: AnalysisAssets): Analyzer[] {
  return analyzerNames(config.analyzers).map((name): Analyzer => {
    switch (name) {
      case 'visual':
        return new VisualAnalyzer({
          ...DEFAULT_VISUAL,
          frameIntervalSec: config.frameIntervalSec,
          maxFramePixels: config.maxFramePixels,
          maxCandidates: config.maxFramesPerVideo,
          maxFrameBytes: config.maxFrameBytesPerVideo,
          minFreeBytes: config.minFreeBytes,
        });
      case 'ocr':
        return new OcrAnalyzer({ modelDir: assets?.ocrModelDir });
      case 'objects':
        return new ObjectsAnalyzer({ modelDir: assets?.objects?.modelDir, wasmDir: assets?.objects?.wasmDir });
      case 'faces':
        return new FacesAnalyzer({ modelDir: assets?.objects?.modelDir, wasmDir: assets?.objects?.wasmDir });
      case 'speech':
        return new SpeechAnalyzer({
          stt: createSpeechToText({ type: config.sttEngine as 'auto' | 'whisper' | 'none', modelsDir: config.modelsDir, model: config.whisperModel }),
          vadModel: assets?.vadModel,
        });
      case 'subtitles':
        // The same binaries as the worker's ffmpeg (resolved once per process).
        return new SubtitlesAnalyzer(async () => (await resolveBinaries(join(config.dataDir, 'bin'))).ffprobe);
      case 'embeddings':
        return new EmbeddingsAnalyzer(new UseEmbedder({ files: assets?.embeddings }));
    }
  });
}
