/**
 * The detector behind ObjectsAnalyzer, in a Bun Worker of its own: `@vladmandic/human` brings its
 * tfjs (from node_modules) and `@energetic-ai/core` bundles another copy; two tfjs copies in one
 * JS realm crash, and both live in the analysis process. A Worker is a separate realm.
 *
 * Pixels in (RGB, already scaled by ffmpeg), detections out; no state between frames.
 *
 * CenterNet is run here directly rather than through Human, which stretches every frame to the
 * model's 512×512 square. The graph is fully convolutional except for five size constants, so it
 * runs at the frame's own aspect ratio (long side 512) with those constants set for that size. On
 * the test clips that is ~45 % faster and finds more: the dog in 11 of 14 frames instead of 6,
 * CenterNet-only person presence 100 % instead of 87 % on people-one-by-one, the same bottle counts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Human, type Config } from '../../../node_modules/@vladmandic/human/dist/human.node-wasm.js';
import type { Box, DetectorRequest, DetectorResponse, RawDetection } from '../stages/objects';
import { nameThisThread } from './thread-info';

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
/**
 * One CenterNet graph for every input size. Only five int32 constants encode the 512×512 layout
 * (three upsampling sizes, the heatmap's cell count and width); they are swapped for the frame's
 * size before each run. The convolution weights stay the same tensors, so the wasm backend keeps
 * its packed XNNPACK operators (keyed by weight tensor, not by input size): a new frame shape
 * costs nothing. A graph loaded per shape packed every weight again (0.3–0.5 s of CPU, +35–50 MB
 * of wasm heap per shape, and three graphs kept at most, so a fourth shape rebuilt one).
 */
let centernet: { model: GraphModel; specs: Map<string, WeightSpec> } | null = null;
/** The five constants for each input size seen (a few int32s each; sizes are few: long side 512, sides multiples of 32). */
const layouts = new Map<string, Record<string, Tensor[]>>();
/** The input size whose constants are in the graph now. */
let layoutNow = '';

type Tensor = ReturnType<Tf['zeros']>;

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
  // Load CenterNet once now, so that broken model files fail the start rather than every frame.
  centernet = await loadCenternet(h.tf, models);
  return h.tf.getBackend();
}

/** The input size's constants (see `centernet`). */
const LAYOUT: Record<string, (height: number, width: number) => number[]> = {
  'tower_0/CenternetHead/c5_upsample/up_sampling2d/mul': (h, w) => [h / 16, w / 16],
  'tower_0/CenternetHead/c4_upsample/up_sampling2d_1/mul': (h, w) => [h / 8, w / 8],
  'tower_0/CenternetHead/c3_upsample/up_sampling2d_2/mul': (h, w) => [h / 4, w / 4],
  'tower_0/BatchGather/concat': (h, w) => [(h / 4) * (w / 4), 4],
  'tower_0/strided_slice_6': (_h, w) => [w / 4],
};

/** CenterNet with an input of any size (1×H×W×3, H and W multiples of 32). */
async function loadCenternet(tf: Tf, modelDir: string): Promise<{ model: GraphModel; specs: Map<string, WeightSpec> }> {
  const json = JSON.parse(readFileSync(join(modelDir, 'centernet.json'), 'utf8'));
  const groups = json.weightsManifest as { paths: string[]; weights: WeightSpec[] }[];
  const specs = groups.flatMap((g) => g.weights);
  const data = Buffer.concat(groups.flatMap((g) => g.paths.map((p) => readFileSync(join(modelDir, p)))));
  // The layout constants must hold the 512×512 values where expected: then swapping them is safe.
  let offset = 0;
  let found = 0;
  for (const w of specs) {
    const count = w.shape.reduce((a, b) => a * b, 1);
    const expected = LAYOUT[w.name]?.(512, 512);
    if (expected) {
      if (w.dtype !== 'int32' || w.quantization || count !== expected.length) break;
      if (expected.some((v, i) => data.readInt32LE(offset + i * 4) !== v)) break;
      found++;
    }
    offset += count * (w.quantization ? QUANT_BYTES[w.quantization.dtype]! : 4);
  }
  const input = (
    json.modelTopology.node as { name: string; attr?: { shape?: { shape?: { dim?: { size: string }[] } } } }[]
  ).find((n) => n.name === 'tower_0/images');
  if (found !== Object.keys(LAYOUT).length || offset !== data.length || !input?.attr?.shape?.shape)
    throw new Error('CenterNet model files are not the expected version');
  input.attr.shape.shape.dim = [1, -1, -1, 3].map((n) => ({ size: String(n) }));
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
  return { model, specs: new Map(specs.filter((w) => w.name in LAYOUT).map((w) => [w.name, w])) };
}

/** CenterNet set up for an H×W input: its layout constants swapped in for that size. */
function centernetFor(tf: Tf, height: number, width: number): GraphModel {
  const { model, specs } = centernet!;
  const key = `${height}x${width}`;
  if (key === layoutNow) return model;
  let consts = layouts.get(key);
  if (!consts) {
    consts = {};
    for (const [name, f] of Object.entries(LAYOUT))
      consts[name] = [tf.tensor(f(height, width), specs.get(name)!.shape, 'int32')];
    layouts.set(key, consts);
  }
  // The executor reads its weight map at every run; the setter also updates the ids it keeps alive.
  const executor = (model as unknown as { executor: { weightMap: Record<string, Tensor[]> } }).executor;
  executor.weightMap = { ...executor.weightMap, ...consts };
  layoutNow = key;
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
  const model = centernetFor(tf, height, width);
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
nameThisThread('vidq-objects');
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
