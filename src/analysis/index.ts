/**
 * The analyzers, chosen by config (`--analyzers`), in pipeline order. One switch, no folder scan:
 * a compiled executable cannot discover plugins at run time.
 */
import { join } from 'node:path';
import { analyzerNames, type Config } from '../config';
import { resolveBinaries } from '../media/binaries';
import type { AnalysisAssets } from './assets/extract';
import { CaptionAnalyzer } from './stages/captions';
import type { Analyzer } from './contracts';
import { effortOptions } from './effort';
import { ModelServerClient, modelLimitPerWorker, sharedModelLimiter } from './engines/model-server/client';
import { OpenAiEmbedder } from './engines/model-server/embedder-openai';
import { OpenAiSpeechToText } from './engines/model-server/stt-openai';
import { UseEmbedder } from './engines/embedder';
import { EmbeddingsAnalyzer } from './stages/embeddings';
import { FacesAnalyzer } from './stages/faces';
import { ObjectsAnalyzer } from './stages/objects';
import { OcrAnalyzer } from './stages/ocr';
import { SpeechAnalyzer } from './stages/speech';
import { createSpeechToText } from './engines/stt';
import { SubtitlesAnalyzer } from './stages/subtitles';
import { DEFAULT_VISUAL, VisualAnalyzer } from './stages/visual';

/**
 * `assets` (from analysisAssets()) says where the models and wasm files are; the compiled
 * executable must pass it. Without it, each analyzer finds its files in node_modules.
 */
export function createAnalyzers(config: Config, assets?: AnalysisAssets): Analyzer[] {
  const effort = effortOptions(config.analysisEffort);
  const list = analyzerNames(config.analyzers).map((name): Analyzer => {
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
        return new OcrAnalyzer({ ...effort.ocr, modelDir: assets?.ocrModelDir });
      case 'objects':
        return new ObjectsAnalyzer({
          ...effort.objects,
          modelDir: assets?.objects?.modelDir,
          wasmDir: assets?.objects?.wasmDir,
        });
      case 'faces':
        return new FacesAnalyzer({
          ...effort.faces,
          modelDir: assets?.objects?.modelDir,
          wasmDir: assets?.objects?.wasmDir,
        });
      case 'speech': {
        const stt = config.stt;
        return new SpeechAnalyzer({
          stt:
            stt.type === 'openai'
              ? new OpenAiSpeechToText(modelServer(config, stt.url, stt.apiKey), stt.model)
              : createSpeechToText({
                  type: stt.type,
                  modelsDir: config.modelsDir,
                  model: stt.type === 'none' ? undefined : stt.model,
                }),
          vadModel: assets?.vadModel,
        });
      }
      case 'subtitles':
        // The same binaries as the worker's ffmpeg (resolved once per process).
        return new SubtitlesAnalyzer(async () => (await resolveBinaries(join(config.dataDir, 'bin'))).ffprobe);
      case 'embeddings':
        return new EmbeddingsAnalyzer(
          config.embedder.type === 'openai'
            ? new OpenAiEmbedder(
                modelServer(config, config.embedder.url, config.embedder.apiKey),
                config.embedder.model,
              )
            : new UseEmbedder({ files: assets?.embeddings }),
        );
    }
  });
  // Captions read the frames as the visual stage picks them (a concurrent reader) and its shots once
  // it is done; placed before the embeddings, which then embed them like any segment.
  const captioner = config.captioner;
  if (captioner.type === 'openai') {
    const captions = new CaptionAnalyzer({
      client: modelServer(config, captioner.url, captioner.apiKey),
      model: captioner.model,
      intervalSec: captioner.intervalSec,
    });
    const at = list.findIndex((a) => a instanceof EmbeddingsAnalyzer);
    list.splice(at < 0 ? list.length : at, 0, captions);
  }
  return list;
}

/** A client of one model server; every client of the process shares one concurrency limiter. */
function modelServer(config: Config, url: string, apiKey: string | undefined): ModelServerClient {
  return new ModelServerClient({
    url,
    apiKey,
    timeoutMs: config.modelTimeoutMs,
    retries: config.modelRetries,
    limiter: sharedModelLimiter(modelLimitPerWorker(config.modelConcurrency, config.analysisWorkers)),
  });
}
