/**
 * `--ollama URL`: one flag for people who run Ollama. At start-up its installed models are read
 * (GET /api/tags, then POST /api/show for each model's capabilities) and a vision model becomes the
 * captioner, a chat model the generator and an embedding model the embedder, unless those options
 * are set to something other than their defaults. What was picked, and what is missing, is printed.
 * An Ollama that cannot be reached is reported and the server starts without it.
 */
import { deriveConfig, type Config, type EngineChanges } from '../../../config';

export interface OllamaModel {
  name: string;
  capabilities: string[];
}

/** Suggestions for what is missing (well-known, small models). */
const SUGGEST = { vision: 'qwen2.5vl', chat: 'llama3.1', embedding: 'nomic-embed-text' };

export async function readOllamaModels(url: string, timeoutMs: number): Promise<OllamaModel[]> {
  const base = url.replace(/\/+$/, '').replace(/\/v1$/, '');
  const get = async (path: string, body?: unknown) => {
    const res = await fetch(base + path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) throw new Error(`HTTP ${res.status} from ${base}${path}`);
    return (await res.json()) as Record<string, unknown>;
  };
  const tags = await get('/api/tags');
  const names = Array.isArray(tags.models)
    ? (tags.models as { name?: unknown; model?: unknown }[]).map((m) => String(m.name ?? m.model ?? '')).filter(Boolean)
    : [];
  return Promise.all(
    names.map(async (name) => {
      try {
        const show = await get('/api/show', { model: name });
        const caps = Array.isArray(show.capabilities) ? (show.capabilities as unknown[]).map(String) : [];
        return { name, capabilities: caps };
      } catch {
        return { name, capabilities: [] };
      }
    }),
  );
}

/** How a set engine is shown: its type and model. */
const setting = (e: { type: string; model?: string }) => `${e.type} ${e.model ?? ''}`;

/** The choices for `models` given `config`: changes to apply and lines to print. */
export function pickOllamaModels(config: Config, models: OllamaModel[]): { changes: EngineChanges; lines: string[] } {
  const url = config.ollama;
  const has = (m: OllamaModel, c: string) => m.capabilities.includes(c);
  const vision = models.find((m) => has(m, 'vision'));
  const chat =
    models.find((m) => has(m, 'completion') && !has(m, 'vision')) ?? models.find((m) => has(m, 'completion'));
  const embedding = models.find((m) => has(m, 'embedding'));
  const changes: EngineChanges = {};
  const lines: string[] = [
    `Ollama at ${url}: ${models.length} model(s) installed (${models.map((m) => m.name).join(', ') || 'none'}).`,
  ];
  const pick = (
    what: string,
    set: boolean,
    setting: string,
    model: OllamaModel | undefined,
    kind: keyof typeof SUGGEST,
    apply: (name: string) => EngineChanges,
    adds: string,
  ) => {
    if (set) lines.push(`  ${what}: ${setting} (set explicitly; kept)`);
    else if (model) {
      Object.assign(changes, apply(model.name));
      lines.push(`  ${what}: ${model.name}`);
    } else
      lines.push(
        `  ${what}: none — no ${kind === 'chat' ? 'chat' : kind} model installed: \`ollama pull ${SUGGEST[kind]}\` would add ${adds}`,
      );
  };
  pick(
    'captioner',
    config.captioner.type !== 'none',
    setting(config.captioner),
    vision,
    'vision',
    (name) => ({ captioner: { type: 'openai', url, model: name } }),
    'captions',
  );
  pick(
    'generator',
    config.generator.type !== 'none',
    setting(config.generator),
    chat,
    'chat',
    (name) => ({
      generator: { type: 'openai', url, model: name, ...(chat && has(chat, 'vision') ? { vision: true } : {}) },
    }),
    'written answers',
  );
  pick(
    'embedder',
    config.embedder.type !== 'use',
    setting(config.embedder),
    embedding,
    'embedding',
    (name) => ({ embedder: { type: 'openai', url, model: name } }),
    'its embeddings (the built-in encoder is used meanwhile)',
  );
  if (config.stt.type !== 'openai')
    lines.push(
      '  transcripts: Ollama serves no speech-to-text; `--stt openai --stt-url …` with a speech server (e.g. speaches) adds them',
    );
  return { changes, lines };
}

/** `config` with what Ollama offers applied (unchanged when --ollama is unset or Ollama is unreachable). */
export async function withOllama(config: Config, out: (line: string) => void): Promise<Config> {
  if (!config.ollama) return config;
  let models: OllamaModel[];
  try {
    models = await readOllamaModels(config.ollama, Math.min(config.modelTimeoutMs, 10_000));
  } catch (e) {
    out(`Ollama at ${config.ollama} cannot be reached (${(e as Error).message}); starting without it.`);
    return config;
  }
  const { changes, lines } = pickOllamaModels(config, models);
  for (const l of lines) out(l);
  return Object.keys(changes).length ? deriveConfig(config, changes) : config;
}
