/**
 * The NSFW classifier behind content moderation (nsfwjs MobileNetV2, whose weights ship inside the
 * npm package), on tfjs's wasm backend (about four times the pure-JS CPU backend's speed here), in
 * a Worker of its own: a frame holds a core for a few hundred ms, which must not stall the HTTP
 * server, and this tfjs copy must not share a realm with Human's.
 * Pixels in (224×224 RGB), the five class probabilities out.
 */
import type { ModerationRequest, ModerationResponse } from './moderation';

declare var self: Worker;

type Model = { classify(img: unknown, topk?: number): Promise<{ className: string; probability: number }[]> };
let model: Model | null = null;
let tf: typeof import('@tensorflow/tfjs') | null = null;

function send(msg: ModerationResponse): void {
  self.postMessage(msg);
}

async function init(wasmDir: string): Promise<void> {
  // tfjs greets Node users and nsfwjs names its model on the console; the service's logs stay quiet.
  const saved = { log: console.log, info: console.info, warn: console.warn };
  console.log = console.info = console.warn = () => {};
  try {
    tf = await import('@tensorflow/tfjs');
    const { setWasmPaths } = await import('@tensorflow/tfjs-backend-wasm');
    setWasmPaths(wasmDir.endsWith('/') ? wasmDir : `${wasmDir}/`);
    if (!(await tf.setBackend('wasm'))) throw new Error(`the tfjs wasm backend did not start from ${wasmDir}`);
    const { load } = await import('nsfwjs/core');
    const { MobileNetV2Model } = await import('nsfwjs/models/mobilenet_v2');
    model = (await load('MobileNetV2', { modelDefinitions: [MobileNetV2Model] })) as unknown as Model;
    // One blank frame while the console is muted: the CPU backend's greeting comes on first use,
    // and the first classification compiles the graph.
    const blank = tf.zeros([224, 224, 3], 'int32') as import('@tensorflow/tfjs').Tensor3D;
    await model.classify(blank, 1);
    blank.dispose();
  } finally {
    Object.assign(console, saved);
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
    const img = tf!.tensor3d(new Uint8Array(m.rgb), [m.height, m.width, 3], 'int32');
    try {
      const p = await model!.classify(img, 5);
      send({ type: 'result', id: m.id, classes: Object.fromEntries(p.map((c) => [c.className, c.probability])) });
    } finally {
      img.dispose();
    }
  } catch (err) {
    send({ type: 'error', id: m.id, message: (err as Error).message });
  }
};
