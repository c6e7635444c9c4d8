/**
 * The detector behind ObjectsAnalyzer, in a Bun Worker of its own: `@vladmandic/human` brings its
 * tfjs (from node_modules) and `@energetic-ai/core` bundles another copy; two tfjs copies in one
 * JS realm crash, and both live in the analysis process. A Worker is a separate realm.
 *
 * Pixels in (RGB, already scaled by ffmpeg), detections out; no state between frames.
 *
 * CenterNet is run here directly rather than through Human, which stretches every frame to the
 * model's 512×512 square. The graph is fully convolutional except for five size constants, so it
 * is loaded with those constants rewritten for the frame's own aspect ratio (long side 512). On
 * the test clips that is ~45 % faster and finds more: the dog in 11 of 14 frames instead of 6,
 * CenterNet-only person presence 100 % instead of 87 % on people-one-by-one, the same bottle counts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Human, type Config } from '../../../node_modules/@vladmandic/human/dist/human.node-wasm.js';
import type { Box, DetectorRequest, DetectorResponse, RawDetection } from '../stages/objects';

declare var self: Worker;

type Tf = Human['tf'];
type GraphModel = Awaited<ReturnType<Tf['loadGraphModel']>>;

/** COCO labels in CenterNet's class order (as in Human's own CenterNet wrapper). */
// prettier-ignore
const LABELS = [
  'person',
  'bicycle',
  'car',
  'motorcycle',
  'airplane',
  'bus',
  'train',
  'truck',
  'boat',
  'traffic light',
  'fire hydrant',
  'stop sign',
  'parking meter',
  'bench',
  'bird',
  'cat',
  'dog',
  'horse',
  'sheep',
  'cow',
  'elephant',
  'bear',
  'zebra',
  'giraffe',
  'backpack',
  'umbrella',
  'handbag',
  'tie',
  'suitcase',
  'frisbee',
  'skis',
  'snowboard',
  'sports ball',
  'kite',
  'baseball bat',
  'baseball glove',
  'skateboard',
  'surfboard',
  'tennis racket',
  'bottle',
  'wine glass',
  'cup',
  'fork',
  'knife',
  'spoon',
  'bowl',
  'banana',
  'apple',
  'sandwich',
  'orange',
  'broccoli',
  'carrot',
  'hot dog',
  'pizza',
  'donut',
  'cake',
  'chair',
  'couch',
  'potted plant',
  'bed',
  'dining table',
  'toilet',
  'tv',
  'laptop',
  'mouse',
  'remote',
  'keyboard',
  'cell phone',
  'microwave',
  'oven',
  'toaster',
  'sink',
  'refrigerator',
  'book',
  'clock',
  'vase',
  'scissors',
  'teddy bear',
  'hair drier',
  'toothbrush',
];

/** Candidates kept before the analyzer's per-label thresholds. */
const MIN_SCORE = 0.15;
const MAX_DETECTIONS = 30;
/** Class-agnostic, like Human's: one box per thing, the likelier label wins. */
const NMS_IOU = 0.4;

let human: Human | null = null;
let modelDir = '';
/** CenterNet graphs by input size (videos come in a few aspect ratios; each new size rebuilds the graph). */
const centernets = new Map<string, GraphModel>();
const MAX_GRAPHS = 3;

function send(msg: DetectorResponse): void {
  self.postMessage(msg);
}

async function init(models: string, wasmDir: string): Promise<string> {
  // Human only logs a model file it cannot read; say which one is missing instead.
  for (const f of ['centernet.json', 'centernet.bin', 'movenet-lightning.json', 'movenet-lightning.bin']) {
    if (!existsSync(join(models, f))) throw new Error(`object models did not load: ${join(models, f)} is missing`);
  }
  const config = {
    backend: 'wasm',
    wasmPath: wasmDir.endsWith('/') ? wasmDir : wasmDir + '/',
    // tfjs loads models through fetch; Bun's fetch reads file:// URLs (Node's does not).
    modelBasePath: 'file://' + (models.endsWith('/') ? models : models + '/'),
    debug: false,
    async: false,
    warmup: 'none',
    // Human otherwise returns cached results for frames it finds similar; the analyzer decides that.
    cacheSensitivity: 0,
    skipAllowed: false,
    filter: { enabled: false },
    face: { enabled: false },
    hand: { enabled: false },
    gesture: { enabled: false },
    segmentation: { enabled: false },
    object: { enabled: false },
    body: {
      enabled: true,
      modelPath: 'movenet-lightning.json',
      minConfidence: 0.1,
      maxDetected: 1,
      skipFrames: 0,
      skipTime: 0,
    },
  } as Partial<Config>;
  const h = new Human(config);
  await h.load();
  // Human keeps a model object even when loading failed; only a loaded graph has an executor.
  const movenet = (h.models.models as unknown as Record<string, { executor?: unknown } | null>).movenet;
  if (!movenet?.executor) throw new Error(`object models did not load (movenet) from ${models}`);
  if (h.tf.getBackend() !== 'wasm')
    throw new Error(`tfjs backend is ${h.tf.getBackend()}, expected wasm (wasm files in ${wasmDir})`);
  human = h;
  modelDir = models;
  // Load CenterNet once now, so that broken model files fail the start rather than every frame.
  await centernetFor(h.tf, 512, 512);
  return h.tf.getBackend();
}

/**
 * CenterNet for an H×W input (multiples of 32): the graph's placeholder shape and the constants
 * that encode the 512×512 layout (three upsampling sizes, the heatmap's cell count and width)
 * are rewritten in the model files before loading.
 */
async function centernetFor(tf: Tf, height: number, width: number): Promise<GraphModel> {
  const key = `${height}x${width}`;
  const cached = centernets.get(key);
  if (cached) {
    // Most recently used last, so the oldest is dropped first.
    centernets.delete(key);
    centernets.set(key, cached);
    return cached;
  }
  if (centernets.size >= MAX_GRAPHS) {
    const [oldest, model] = centernets.entries().next().value!;
    model.dispose();
    centernets.delete(oldest);
  }
  const json = JSON.parse(readFileSync(join(modelDir, 'centernet.json'), 'utf8'));
  const groups = json.weightsManifest as { paths: string[]; weights: WeightSpec[] }[];
  const specs = groups.flatMap((g) => g.weights);
  const data = Buffer.concat(groups.flatMap((g) => g.paths.map((p) => readFileSync(join(modelDir, p)))));
  const gh = height / 4;
  const gw = width / 4;
  const patches: Record<string, number[]> = {
    'tower_0/CenternetHead/c5_upsample/up_sampling2d/mul': [height / 16, width / 16],
    'tower_0/CenternetHead/c4_upsample/up_sampling2d_1/mul': [height / 8, width / 8],
    'tower_0/CenternetHead/c3_upsample/up_sampling2d_2/mul': [gh, gw],
    'tower_0/BatchGather/concat': [gh * gw, 4],
    'tower_0/strided_slice_6': [gw],
  };
  let offset = 0;
  let patched = 0;
  for (const w of specs) {
    const count = w.shape.reduce((a, b) => a * b, 1);
    const bytes = count * (w.quantization ? QUANT_BYTES[w.quantization.dtype]! : 4);
    const values = patches[w.name];
    if (values) {
      if (w.dtype !== 'int32' || w.quantization || count !== values.length)
        throw new Error(`unexpected CenterNet constant ${w.name}`);
      values.forEach((v, i) => data.writeInt32LE(v, offset + i * 4));
      patched++;
    }
    offset += bytes;
  }
  const input = (
    json.modelTopology.node as { name: string; attr?: { shape?: { shape?: { dim?: { size: string }[] } } } }[]
  ).find((n) => n.name === 'tower_0/images');
  if (patched !== Object.keys(patches).length || offset !== data.length || !input?.attr?.shape?.shape)
    throw new Error('CenterNet model files are not the expected version');
  input.attr.shape.shape.dim = [1, height, width, 3].map((n) => ({ size: String(n) }));
  const model = await tf.loadGraphModel(
    tf.io.fromMemory({
      modelTopology: json.modelTopology,
      weightSpecs: specs as never,
      weightData: data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer,
      format: json.format,
      generatedBy: json.generatedBy,
      convertedBy: json.convertedBy,
    }),
  );
  centernets.set(key, model);
  return model;
}

interface WeightSpec {
  name: string;
  shape: number[];
  dtype: string;
  quantization?: { dtype: string };
}
const QUANT_BYTES: Record<string, number> = { float16: 2, uint16: 2, uint8: 1 };

/**
 * CenterNet always; MoveNet only as a second opinion on a person CenterNet half sees (a candidate
 * scoring below `bodyBelow`): a confident CenterNet person settles the question, and with no person
 * candidate at all MoveNet almost never finds one (measured at 2 s frame intervals over the test
 * clips: it ran on 108 frames without a confident person, 78 of them without any candidate, and
 * found a person in 2 of those 78), so it is not worth ~40 ms a frame there.
 */
async function detect(rgb: Uint8Array, width: number, height: number, bodyBelow: number) {
  const h = human!;
  const tf = h.tf;
  const model = await centernetFor(tf, height, width);
  const pixels = tf.tensor(rgb, [1, height, width, 3], 'int32');
  try {
    let t = performance.now();
    const out = tf.tidy(
      () => model.execute(tf.cast(pixels, 'float32'), 'tower_0/detections') as ReturnType<Tf['zeros']>,
    );
    // Rows: x1, y1, x2, y2 (input pixels), score, class index.
    const rows = ((await out.array()) as number[][][])[0]!;
    out.dispose();
    const boxes = tf.tensor2d(rows.map((r) => [r[1]!, r[0]!, r[3]!, r[2]!]));
    const scores = tf.tensor1d(rows.map((r) => r[4]!));
    const keep = await tf.image.nonMaxSuppressionAsync(boxes, scores, MAX_DETECTIONS, NMS_IOU, MIN_SCORE);
    const kept = Array.from(await keep.data(), Number);
    tf.dispose([boxes, scores, keep]);
    const objects: RawDetection[] = [];
    for (const i of kept) {
      const [x1, y1, x2, y2, score, cls] = rows[i]! as [number, number, number, number, number, number];
      const label = LABELS[cls];
      if (!label) continue;
      const [left, top, right, bottom] = [
        clamp01(x1 / width),
        clamp01(y1 / height),
        clamp01(x2 / width),
        clamp01(y2 / height),
      ];
      objects.push({
        label,
        score: round4(score),
        box: [round4(left), round4(top), round4(right - left), round4(bottom - top)],
      });
    }
    const objectMs = performance.now() - t;
    const bestPerson = Math.max(0, ...objects.filter((o) => o.label === 'person').map((o) => o.score));
    let body: { score: number; box: Box } | null = null;
    let bodyMs = 0;
    if (bodyBelow === Infinity || (bestPerson > 0 && bestPerson < bodyBelow)) {
      t = performance.now();
      const r = await h.detect(pixels);
      if (r.error) throw new Error(r.error);
      bodyMs = performance.now() - t;
      const b = r.body[0];
      if (b) body = { score: round4(b.score), box: b.boxRaw.map(round4) as Box };
    }
    return { objects, body, objectMs, bodyMs };
  } finally {
    pixels.dispose();
  }
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;
const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

/**
 * One request at a time, in arrival order: the analysis worker's two job slots share this thread,
 * and the detector's state (its tensors, the model of one input size) is not made for interleaved calls.
 */
let turn: Promise<void> = Promise.resolve();
self.onmessage = (ev: MessageEvent<DetectorRequest>) => {
  turn = turn.then(() => handle(ev.data));
};

async function handle(msg: DetectorRequest): Promise<void> {
  try {
    if (msg.type === 'init') {
      const backend = await init(msg.modelDir, msg.wasmDir);
      send({ type: 'ready', backend });
    } else if (msg.type === 'detect') {
      if (!human) throw new Error('the detector is not initialised');
      const r = await detect(new Uint8Array(msg.rgb), msg.width, msg.height, msg.bodyBelow);
      send({ type: 'result', id: msg.id, ...r });
    }
  } catch (e) {
    send({ type: 'error', id: msg.type === 'detect' ? msg.id : undefined, message: (e as Error).message ?? String(e) });
  }
}
