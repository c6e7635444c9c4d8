/**
 * The faster Minimum/Maximum kernels of the face worker must give what the tfjs wasm backend's own
 * kernels give (std::min / std::max), bit for bit. Checked here against a registry and a heap
 * stand-in (the real kernel registry lives in the worker's tfjs copy); the face stage's own tests
 * run them on real frames.
 */
import { describe, expect, test } from 'bun:test';
import { useExactMinMax } from '../../src/analysis/workers/exact-kernels';

interface Info {
  shape: number[];
  dtype: string;
  dataId: object;
}

/** A kernel registry and backend stand-in: tensors are Float32Arrays keyed by their dataId. */
function fakeTf() {
  const data = new Map<object, Float32Array>();
  const calls: string[] = [];
  const registry = new Map<string, { kernelName: string; backendName: string; kernelFunc: (a: never) => unknown }>();
  for (const name of ['Minimum', 'Maximum'])
    registry.set(name, {
      kernelName: name,
      backendName: 'wasm',
      kernelFunc: () => {
        calls.push(name);
        return 'original';
      },
    });
  const tensor = (values: number[], shape: number[] = [values.length], dtype = 'float32'): Info => {
    const dataId = {};
    data.set(dataId, Float32Array.from(values));
    return { shape, dtype, dataId };
  };
  const backend = {
    makeOutput: (shape: number[], dtype: string): Info =>
      tensor(new Array(shape.reduce((a, b) => a * b, 1)).fill(0), shape, dtype),
    typedArrayFromHeap: (t: Info) => data.get(t.dataId)!,
  };
  const tf = {
    getKernel: (name: string) => registry.get(name),
    unregisterKernel: (name: string) => void registry.delete(name),
    registerKernel: (c: { kernelName: string }) => void registry.set(c.kernelName, c as never),
  };
  const run = (name: string, a: Info, b: Info) => {
    const out = registry.get(name)!.kernelFunc({ inputs: { a, b }, backend } as never);
    return typeof out === 'string' ? out : Array.from(data.get((out as Info).dataId)!);
  };
  return { tf: tf as unknown as Parameters<typeof useExactMinMax>[0], tensor, run, calls };
}

/** std::min(a, b) and std::max(a, b), as the wasm backend computes them (not Math.min/max: NaN and -0 differ). */
// biome-ignore lint/complexity/useMathMinMax: std::min's semantics
const stdMin = (a: number, b: number) => (b < a ? b : a);
// biome-ignore lint/complexity/useMathMinMax: std::max's semantics
const stdMax = (a: number, b: number) => (a < b ? b : a);
const bits = (xs: number[]) => Array.from(new Uint32Array(Float32Array.from(xs).buffer));

describe('exact Minimum/Maximum kernels', () => {
  const xs = [-3.5, -0, 0, 2, 6, 6.0001, 1e30, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];

  test('a tensor against one number: the same bits as std::min/std::max, NaN and signed zeros included', () => {
    const { tf, tensor, run, calls } = fakeTf();
    useExactMinMax(tf);
    for (const c of [6, 0, -0, Number.NaN]) {
      expect(bits(run('Minimum', tensor(xs), tensor([c], [])) as number[])).toEqual(bits(xs.map((x) => stdMin(x, c))));
      expect(bits(run('Maximum', tensor(xs), tensor([c], [1])) as number[])).toEqual(bits(xs.map((x) => stdMax(x, c))));
    }
    expect(calls).toEqual([]);
  });

  test('two tensors of one shape: element by element, as std::min/std::max', () => {
    const { tf, tensor, run } = fakeTf();
    useExactMinMax(tf);
    const ys = [...xs].reverse();
    expect(bits(run('Minimum', tensor(xs, [2, 5]), tensor(ys, [2, 5])) as number[])).toEqual(
      bits(xs.map((x, i) => stdMin(x, ys[i]!))),
    );
    expect(bits(run('Maximum', tensor(xs, [2, 5]), tensor(ys, [2, 5])) as number[])).toEqual(
      bits(xs.map((x, i) => stdMax(x, ys[i]!))),
    );
  });

  test("other broadcasts and int32 go to the backend's own kernel; installing twice wraps once", () => {
    const { tf, tensor, run, calls } = fakeTf();
    useExactMinMax(tf);
    useExactMinMax(tf);
    expect(run('Minimum', tensor([1, 2, 3, 4], [2, 2]), tensor([1, 2], [2]))).toBe('original');
    expect(run('Maximum', tensor([1], []), tensor([1, 2], [2]))).toBe('original');
    expect(run('Minimum', tensor([1, 2], [2], 'int32'), tensor([1], [], 'int32'))).toBe('original');
    expect(calls).toEqual(['Minimum', 'Maximum', 'Minimum']);
  });
});
