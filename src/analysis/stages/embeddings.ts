/**
 * The embeddings stage: a sentence embedding for every segment the earlier stages stored, so that
 * questions can be matched by meaning. It adds no segments; it stores the vectors (src/search/vectors.ts)
 * in the transaction that ends the stage.
 *
 * What is embedded is a short sentence per segment rather than its bare text, because questions are
 * sentences ("when does the dog appear?", "how many people are there?"). On 25 questions over 17
 * segments of every kind (top-1 hits, USE-lite): bare text 18; "a dog is visible" / "on-screen text:
 * X" 18 ("visible" pulled every "what is shown?" question to the objects); the phrasing below 24. It
 * was tuned on those questions, so take the 24 as optimistic; the gain over bare text is the point.
 */
import { clearVideoVectors, storeVideoVectors } from '../../storage/repositories/vectors';
import type { Segment } from '../../storage/rows';
import type { Analyzer, EngineInfo, StageContext, StageResult } from '../contracts';
import { apiKey, engine, needs, serverUrl, text } from '../../options';
import { defineAnalyzer } from '../descriptor';
import { UseEmbedder, type Embedder } from '../engines/embedder';
import { OpenAiEmbedder } from '../engines/model-server/embedder-openai';
import { ModelServerError } from '../engines/model-server/client';

/** Texts per embedder call: the unit of progress and of cancellation. */
const STEP = 64;

export class EmbeddingsAnalyzer implements Analyzer {
  readonly stage = 'analyzing:embeddings';
  readonly kinds = [] as const;
  readonly info: EngineInfo;
  readonly weight = 0.2;

  /** The analyzer owns `embedder`: `close()` frees it. */
  constructor(private readonly embedder: Embedder = new UseEmbedder()) {
    this.info = {
      kind: 'embeddings',
      name: embedder.info.name,
      ...(embedder.info.version ? { version: embedder.info.version } : {}),
    };
  }

  async run(ctx: StageContext): Promise<StageResult> {
    const segs = ctx.segments();
    // Many segments share a sentence (every single-person span, every speech span): embed each once.
    const distinct = new Map<string, number>();
    const which = segs.map((s) => {
      const text = embeddingText(s);
      let k = distinct.get(text);
      if (k === undefined) distinct.set(text, (k = distinct.size));
      return k;
    });
    const texts = [...distinct.keys()];
    const vectors: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += STEP) {
      ctx.signal.throwIfAborted();
      try {
        vectors.push(...(await this.embedder.embed(texts.slice(i, i + STEP))));
      } catch (e) {
        if (!(e instanceof ModelServerError)) throw e;
        // An embeddings server that fails never fails the video: it keeps no vectors (none of an
        // earlier model either: questions never mix two models) and `reanalyze` fills them in.
        ctx.log.warn('embeddings skipped', { reason: e.message });
        const videoId = ctx.video.id;
        return {
          summary: { engine: this.info.name, segments: segs.length, skipped: `embeddings: skipped — ${e.message}` },
          apply: (tx) => clearVideoVectors(tx, videoId),
        };
      }
      ctx.progress(Math.min(texts.length, i + STEP) / texts.length);
    }
    const videoId = ctx.video.id;
    return {
      summary: {
        engine: this.info.name,
        dims: this.embedder.dims,
        segments: segs.length,
        distinct_texts: texts.length,
      },
      // The compact vector store (src/search/vectors.ts): each distinct vector once, as int8.
      apply: (tx) =>
        storeVideoVectors(
          tx,
          videoId,
          segs.map((s) => s.id),
          which,
          vectors,
        ),
    };
  }

  async close(): Promise<void> {
    await this.embedder.close?.();
  }
}

/** The sentence embedded for a segment (see the file comment for why it is not the bare text). */
export function embeddingText(s: Pick<Segment, 'kind' | 'text' | 'extra'>): string {
  const text = s.text.replace(/\s+/g, ' ').trim();
  switch (s.kind) {
    case 'ocr':
      // Lower case: all-caps titles split into odd word pieces and match questions worse.
      return text ? `the screen shows the text "${text.toLowerCase()}"` : '';
    case 'object':
      return objectSentence(text, s.extra ?? null);
    case 'shot':
      return /^shot \d+ of \d+$/i.test(text) ? `scene change: cut to ${text}` : text;
    case 'speech':
      // Speech spans carry no words (those are transcript segments); what they say is that someone
      // talks. "someone is talking" drew "who is in the video?" away from the person spans.
      return 'speech: someone talks';
    case 'audio':
      return text ? `sound: ${text}` : '';
    default:
      // transcript, caption: already what a question is about.
      return text;
  }
}

/**
 * "a dog in view", "three bottles in view", "one person (people) in view". The label and count come
 * from `extra.label` / `extra.count` when the objects stage sets them, else from texts like "dog",
 * "3 bottles", "bottle x3".
 */
function objectSentence(text: string, extra: Record<string, unknown> | null): string {
  let label = typeof extra?.label === 'string' ? extra.label : '';
  let count =
    [extra?.count, extra?.max_count, extra?.maxCount].find((v): v is number => typeof v === 'number' && v >= 1) ?? 0;
  if (!label) {
    const lead = /^(\d+)\s*[x×]?\s+(.+)$/i.exec(text);
    const trail = /^(.+?)\s*(?:[x×]\s*(\d+)|\((\d+)\))$/i.exec(text);
    if (lead) [label, count] = [lead[2]!, count || Number(lead[1])];
    else if (trail) [label, count] = [trail[1]!, count || Number(trail[2] ?? trail[3])];
    else label = text;
  }
  label = label.trim().toLowerCase();
  if (!label) return '';
  // Already a phrase ("a dog and a skateboard"): leave it be.
  if (label.split(' ').length > 3) return text;
  if (count > 1) return `${countWord(count)} ${plural(label)} in view`;
  const noun = singular(label);
  // "people" so that "how many people…", "who is there…" questions reach a single person too.
  return noun === 'person' ? 'one person (people) in view' : `${/^[aeiou]/.test(noun) ? 'an' : 'a'} ${noun} in view`;
}

const COUNT_WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
const countWord = (n: number) => COUNT_WORDS[n] ?? String(n);

/** COCO labels whose plural is not just "+s". */
const IRREGULAR: Record<string, string> = {
  person: 'people',
  mouse: 'mice',
  sheep: 'sheep',
  knife: 'knives',
  skis: 'skis',
  scissors: 'scissors',
};

function plural(label: string): string {
  const words = label.split(' ');
  const last = words.pop()!;
  if (IRREGULAR[last]) return [...words, IRREGULAR[last]].join(' ');
  if (/s$/.test(last) && !/(bus|glass)$/.test(last)) return label;
  const p = /(s|sh|ch|x)$/.test(last) ? last + 'es' : /[^aeiou]y$/.test(last) ? last.slice(0, -1) + 'ies' : last + 's';
  return [...words, p].join(' ');
}

function singular(label: string): string {
  if (label === 'people' || label === 'persons') return 'person';
  return label;
}

/** Who embeds segments and questions. */
export const EMBEDDER_ENGINE = engine(
  'embedder',
  'use',
  'segment and question vectors: use (built-in) | openai (key: VIDQ_EMBEDDER_API_KEY)',
  {
    /** The built-in Universal Sentence Encoder. */
    use: {},
    /** POST /v1/embeddings of an OpenAI-compatible server. */
    openai: {
      url: needs(
        serverUrl('embedder-url', 'OpenAI-compatible base URL for --embedder openai', 'VIDQ_EMBEDDER_API_KEY'),
        "the server's base URL (e.g. http://127.0.0.1:11434)",
      ),
      model: needs(
        text('embedder-model', '', 'embedding model name for --embedder openai, e.g. nomic-embed-text'),
        'the embedding model the server serves (e.g. nomic-embed-text)',
      ),
      apiKey: apiKey(null, 'VIDQ_EMBEDDER_API_KEY', 'bearer key of the embeddings server'),
    },
  },
);

/** Vectors of every segment, for search by meaning: last, after every stage that adds segments. */
export const embeddingsDescriptor = defineAnalyzer({
  name: 'embeddings',
  options: {},
  engines: { embedder: EMBEDDER_ENGINE },
  listed: true,
  live: false,
  reanalyzable: true,
  create: ({ embedder }, setup) =>
    new EmbeddingsAnalyzer(
      embedder.type === 'openai'
        ? new OpenAiEmbedder(setup.modelServer(embedder.url, embedder.apiKey), embedder.model)
        : new UseEmbedder({ files: setup.assets?.embeddings }),
    ),
});
