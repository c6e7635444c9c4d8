/**
 * The analyzers a config runs, made from their descriptors (analyzers.ts), in pipeline order.
 */
import { join } from 'node:path';
import { type Config, vadModelFromEnv } from '../config';
import { resolveBinaries } from '../media/binaries';
import { ANALYZERS, analyzerNames } from './analyzers';
import type { Analyzer } from './contracts';
import type { AnalysisAssets, AnalyzerConfig, AnalyzerSetup } from './descriptor';
import { type Limiter, ModelServerClient } from './engines/model-server/client';

/**
 * `modelLimiter`: the process's one limit on model-server requests, shared by every client (made by
 * the composition root). `assets` (from analysisAssets()) says where the models and wasm files are;
 * the compiled executable must pass it. Without it, each analyzer finds its files in node_modules.
 * `live`: only those that also run on the windows of live streams.
 */
export function createAnalyzers(
  config: Config,
  o: { modelLimiter: Limiter; assets?: AnalysisAssets; live?: boolean },
): Analyzer[] {
  const assets = o.assets;
  const setup: AnalyzerSetup = {
    assets,
    vadModel: assets?.vadModel ?? vadModelFromEnv(),
    modelsDir: config.modelsDir,
    minFreeBytes: config.minFreeBytes,
    modelServer: (url, apiKey) => modelServer(config, o.modelLimiter, url, apiKey),
    // The same binaries as the worker's ffmpeg (resolved once per process).
    ffprobe: async () => (await resolveBinaries(join(config.dataDir, 'bin'))).ffprobe,
  };
  const names: readonly string[] = analyzerNames(config.analyzers);
  return ANALYZERS.filter((d) => names.includes(d.name) && (!o.live || d.live)).flatMap((d) => {
    // Each descriptor reads its own options and engine sections from the one config.
    const made = (d.create as (c: AnalyzerConfig<never, never>, s: AnalyzerSetup) => Analyzer | null)(
      config as unknown as AnalyzerConfig<never, never>,
      setup,
    );
    return made ? [made] : [];
  });
}

/** A client of one model server; every client of the process shares its one concurrency limiter. */
function modelServer(config: Config, limiter: Limiter, url: string, apiKey: string | undefined): ModelServerClient {
  return new ModelServerClient({
    url,
    apiKey,
    timeoutMs: config.modelTimeoutMs,
    retries: config.modelRetries,
    limiter,
  });
}
