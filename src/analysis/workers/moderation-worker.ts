/**
 * The NSFW classifier behind content moderation: nsfwjs's MobileNetV2 (a Keras layers model whose
 * topology and weights ship inside the npm package as JavaScript modules), run by tfjs on its wasm
 * backend (about four times the pure-JS CPU backend's speed here), in a Worker of its own: a frame
 * holds a core for a few hundred ms, which must not stall the HTTP server, and this tfjs copy must
 * not share a realm with Human's. Pixels in (224×224 RGB), the five class probabilities out.
 *
 * nsfwjs's own loader is not used: it imports the model files dynamically, which the executable's
 * bundle cannot follow. Its steps are few (scale to 0..1, predict, name the classes) and are here.
 */
import type * as Tf from '@tensorflow/tfjs';
import type { ModerationRequest, ModerationResponse } from '../../flows/moderation';

// Required, not imported: the packages' CommonJS builds (package.json "main"), so that tfjs-core is
// one instance for tfjs and its wasm backend. Bundled from their ESM builds for the executable,
// tfjs started without its platform (`env().platform` undefined).
const tf = require('@tensorflow/tfjs') as typeof Tf;
const { setWasmPaths } = require('@tensorflow/tfjs-backend-wasm') as typeof import('@tensorflow/tfjs-backend-wasm');

declare var self: Worker;

/** nsfwjs's class order (its nsfw_classes.js). */
const CLASSES = ['Drawing', 'Hentai', 'Neutral', 'Porn', 'Sexy'];
const SIZE = 224;

let model: Tf.LayersModel | null = null;

function send(msg: ModerationResponse): void {
  self.postMessage(msg);
}

async function init(wasmDir: string): Promise<void> {
  // tfjs greets Node users on the console on first use; the service's logs stay quiet.
  const saved = { log: console.log, info: console.info, warn: console.warn };
  console.log = console.info = console.warn = () => {};
  try {
    setWasmPaths(wasmDir.endsWith('/') ? wasmDir : `${wasmDir}/`);
    if (!(await tf.setBackend('wasm'))) throw new Error(`the tfjs wasm backend did not start from ${wasmDir}`);
    // The package's model files by path (its export map hides them), as faces-worker.ts reaches Human's.
    const json = require('../../../node_modules/nsfwjs/dist/models/mobilenet_v2/model.min.js') as {
      modelTopology: object;
      weightsManifest: { paths: string[]; weights: Tf.io.WeightsManifestEntry[] }[];
    };
    const shard = require('../../../node_modules/nsfwjs/dist/models/mobilenet_v2/group1-shard1of1.min.js') as string;
    if (json.weightsManifest.length !== 1 || json.weightsManifest[0]!.paths.length !== 1)
      throw new Error('the nsfwjs MobileNetV2 files are not the single weight shard this build expects');
    const bytes = Buffer.from(shard, 'base64');
    model = await tf.loadLayersModel(
      tf.io.fromMemory({
        modelTopology: json.modelTopology,
        weightSpecs: json.weightsManifest[0]!.weights,
        weightData: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
      }),
    );
    // One blank frame while the console is muted: the greeting comes on first use, and the first
    // prediction compiles the kernels.
    await classify(new Uint8Array(SIZE * SIZE * 3));
  } finally {
    Object.assign(console, saved);
  }
}

async function classify(rgb: Uint8Array): Promise<Record<string, number>> {
  const out = tf.tidy(() => {
    const img = tf.tensor4d(rgb, [1, SIZE, SIZE, 3], 'int32');
    return model!.predict(img.toFloat().div(255)) as Tf.Tensor;
  });
  try {
    const p = await out.data();
    return Object.fromEntries(CLASSES.map((c, k) => [c, p[k]!]));
  } finally {
    out.dispose();
  }
}

self.onmessage = async (e: MessageEvent<ModerationRequest>) => {
  const m = e.data;
  if (m.type === 'init') {
    try {
      await init(m.wasmDir);
      send({ type: 'ready' });
    } catch (err) {
      send({ type: 'error', message: `the moderation model did not load: ${(err as Error).message}` });
    }
    return;
  }
  try {
    if (m.width !== SIZE || m.height !== SIZE) throw new Error(`frames must be ${SIZE}×${SIZE}`);
    send({ type: 'result', id: m.id, classes: await classify(new Uint8Array(m.rgb)) });
  } catch (err) {
    send({ type: 'error', id: m.id, message: (err as Error).message });
  }
};
