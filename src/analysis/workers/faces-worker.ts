/**
 * The face detector and describer behind FacesAnalyzer, in a Bun Worker of its own for the same
 * reason as objects-worker.ts (two tfjs copies must not share a JS realm).
 *
 * BlazeFace finds faces; FaceRes (Human's "description" model) gives each a 1024-d descriptor.
 * Pixels in (RGB), faces out; no state between frames.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Human, type Config } from '../../../node_modules/@vladmandic/human/dist/human.node-wasm.js';
import type { FaceRequest, FaceResponse, RawFace } from '../stages/faces';
import { useExactMinMax } from './exact-kernels';
import { nameThisThread } from './thread-info';

declare var self: Worker;

let human: Human | null = null;

/** The model files the face pipeline reads (as FACE_MODELS in faces.ts, with their weights). */
const FACE_MODEL_FILES = [
  'blazeface.json',
  'blazeface.bin',
  'facemesh.json',
  'facemesh.bin',
  'faceres.json',
  'faceres.bin',
];

function send(msg: FaceResponse): void {
  self.postMessage(msg);
}

async function init(models: string, wasmDir: string): Promise<string> {
  for (const f of FACE_MODEL_FILES) {
    if (!existsSync(join(models, f))) throw new Error(`face models did not load: ${join(models, f)} is missing`);
  }
  const config = {
    backend: 'wasm',
    wasmPath: wasmDir.endsWith('/') ? wasmDir : wasmDir + '/',
    modelBasePath: 'file://' + (models.endsWith('/') ? models : models + '/'),
    debug: false,
    async: false,
    warmup: 'none',
    cacheSensitivity: 0,
    skipAllowed: false,
    filter: { enabled: false },
    // The mesh aligns (rotates and crops) each face before FaceRes describes it; without it the
    // descriptors of one person across shots drift apart.
    face: {
      enabled: true,
      detector: {
        modelPath: 'blazeface.json',
        rotation: true,
        maxDetected: 8,
        skipFrames: 0,
        skipTime: 0,
        minConfidence: 0.5,
        iouThreshold: 0.1,
        return: false,
      },
      mesh: { enabled: true, modelPath: 'facemesh.json' },
      attention: { enabled: false },
      iris: { enabled: false },
      description: { enabled: true, modelPath: 'faceres.json', skipFrames: 0, skipTime: 0, minConfidence: 0.1 },
      emotion: { enabled: false },
      antispoof: { enabled: false },
      liveness: { enabled: false },
      gear: { enabled: false },
    },
    hand: { enabled: false },
    gesture: { enabled: false },
    segmentation: { enabled: false },
    object: { enabled: false },
    body: { enabled: false },
  } as unknown as Partial<Config>;
  const h = new Human(config);
  await h.load();
  const models_ = h.models.models as unknown as Record<string, { executor?: unknown } | null>;
  for (const m of ['blazeface', 'facemesh', 'faceres'])
    if (!models_[m]?.executor) throw new Error(`face models did not load (${m}) from ${models}`);
  if (h.tf.getBackend() !== 'wasm')
    throw new Error(`tfjs backend is ${h.tf.getBackend()}, expected wasm (wasm files in ${wasmDir})`);
  // FaceRes's activation clipping, ~4× faster with the same results (see exact-kernels.ts).
  useExactMinMax(h.tf as unknown as Parameters<typeof useExactMinMax>[0]);
  human = h;
  return h.tf.getBackend();
}

async function detect(rgb: Uint8Array, width: number, height: number): Promise<RawFace[]> {
  const h = human!;
  const pixels = h.tf.tensor(rgb, [1, height, width, 3], 'int32');
  try {
    const r = await h.detect(pixels);
    if (r.error) throw new Error(r.error);
    return r.face
      .filter((f) => Array.isArray(f.embedding) && f.embedding.length > 0)
      .map((f) => ({
        score: round4(f.score),
        box: f.boxRaw.map(round4) as [number, number, number, number],
        descriptor: Array.from(f.embedding!, (x) => Math.round(x * 1e5) / 1e5),
      }));
  } finally {
    pixels.dispose();
  }
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

/**
 * One request at a time, in arrival order: the analysis worker's two job slots share this thread,
 * and the detector's state (its tensors, the model of one input size) is not made for interleaved calls.
 */
let turn: Promise<void> = Promise.resolve();
nameThisThread('vidq-faces');
self.onmessage = (ev: MessageEvent<FaceRequest>) => {
  turn = turn.then(() => handle(ev.data));
};

async function handle(msg: FaceRequest): Promise<void> {
  try {
    if (msg.type === 'init') {
      send({ type: 'ready', backend: await init(msg.modelDir, msg.wasmDir) });
    } else if (msg.type === 'detect') {
      if (!human) throw new Error('the face detector is not initialised');
      send({ type: 'result', id: msg.id, faces: await detect(new Uint8Array(msg.rgb), msg.width, msg.height) });
    }
  } catch (e) {
    send({ type: 'error', id: msg.type === 'detect' ? msg.id : undefined, message: (e as Error).message ?? String(e) });
  }
}
