/**
 * bench/objects-percall: what one call of the object detector costs in CPU at several input sizes,
 * and what its first calls cost (loading the models, packing the weights): the figures behind
 * batching frames of several videos into one model call (issue 35). A tiny input costs only the
 * fixed part of a call (graph dispatch, output read-back, NMS): the most a batch could share.
 *
 *   bun bench/objects-percall.ts [--calls 8]
 *
 * CPU is read per thread from /proc (the detector's Worker is named vidq-objects), so the figures
 * hold on a shared machine.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { DetectorRequest, DetectorResponse } from '../src/analysis/stages/objects';
import { objectModelPaths } from '../src/analysis/stages/objects';
import { OBJECTS_WORKER } from '../src/analysis/workers/entries';

const { values } = parseArgs({ options: { calls: { type: 'string' } } });
const CALLS = Number(values.calls ?? 8);

/** CPU ms of the threads with this name. */
function threadCpuMs(name: string): number {
  let ms = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      if (readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() !== name) continue;
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ms += (Number(f[11]) + Number(f[12])) * 10;
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return ms;
}
const cpu = () => threadCpuMs('vidq-objects');

const worker = new Worker(OBJECTS_WORKER);
const waiting = new Map<number, (m: DetectorResponse) => void>();
let started: (m: DetectorResponse) => void = () => {};
const ready = new Promise<DetectorResponse>((r) => (started = r));
worker.onmessage = (e: MessageEvent<DetectorResponse>) => {
  const m = e.data;
  if (m.type === 'ready') started(m);
  else if (m.type === 'result') waiting.get(m.id)?.(m);
  else throw new Error(m.message);
};
worker.postMessage({ type: 'init', ...objectModelPaths() } satisfies DetectorRequest);
await ready;
const init = cpu();

let id = 0;
/** One detection of a noise picture; `body`: MoveNet too (as on a frame with a weak person candidate). */
function detect(width: number, height: number, body = false): Promise<DetectorResponse> {
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0; i < rgb.length; i++) rgb[i] = (i * 2654435761) >>> 24;
  const my = ++id;
  const done = new Promise<DetectorResponse>((r) => waiting.set(my, r));
  worker.postMessage(
    {
      type: 'detect',
      id: my,
      rgb: rgb.buffer,
      width,
      height,
      bodyBelow: body ? Infinity : -1,
    } satisfies DetectorRequest,
    [rgb.buffer],
  );
  return done;
}

const c0 = cpu();
await detect(512, 288);
const first = cpu() - c0;
console.log(`models loaded: ${init} CPU-ms; first 512×288 call: ${first} CPU-ms (weights packed)`);
for (const [w, h, body] of [
  [32, 32, false],
  [64, 64, false],
  [256, 160, false],
  [352, 192, false],
  [448, 256, false],
  [512, 288, false],
  [512, 288, true],
  [512, 416, false],
  [512, 512, false],
] as const) {
  await detect(w, h, body);
  const t = cpu();
  for (let i = 0; i < CALLS; i++) await detect(w, h, body);
  console.log(
    `${`${w}×${h}${body ? ' + MoveNet' : ''}`.padEnd(20)} ${((cpu() - t) / CALLS).toFixed(1).padStart(7)} CPU-ms a call`,
  );
}
worker.terminate();
