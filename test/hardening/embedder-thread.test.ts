/**
 * The server's question embedder runs in a worker thread: same vectors as the model on the calling
 * thread, and the event loop keeps turning while a question is embedded.
 */
import { expect, test } from 'bun:test';
import { ThreadedEmbedder } from '../../src/analysis/engines/embedder-thread';
import { UseEmbedder, cosine, useFiles } from '../../src/analysis/engines/embedder';

test('ThreadedEmbedder gives the vectors of UseEmbedder without holding up the event loop', async () => {
  const texts = ['What is written on screen?', 'a dog rides a skateboard', '', 'How many bottles are on the table?'];
  const direct = new UseEmbedder({ files: useFiles() });
  const threaded = new ThreadedEmbedder(() => useFiles());
  try {
    const a = await direct.embed(texts);
    await threaded.embed(['warm up']); // loads the model in the thread
    // While the thread works, timers on this thread keep firing on time.
    let worstGap = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      worstGap = Math.max(worstGap, now - last);
      last = now;
    }, 1);
    const t0 = performance.now();
    const rounds = await Promise.all(Array.from({ length: 20 }, () => threaded.embed(texts)));
    const took = performance.now() - t0;
    clearInterval(timer);
    for (const b of rounds) {
      expect(b).toHaveLength(texts.length);
      for (let i = 0; i < texts.length; i++) {
        if (texts[i] === '') expect([...b[i]!].every((x) => x === 0)).toBe(true);
        else expect(cosine(a[i]!, b[i]!)).toBeGreaterThan(0.9999);
      }
    }
    console.log(
      `80 texts embedded in the thread in ${took.toFixed(0)} ms; longest pause of this thread's event loop ${worstGap.toFixed(1)} ms`,
    );
    // Embedding these on this thread takes ~20 ms per call, 20 calls in a row: the loop never waits that long.
    expect(worstGap).toBeLessThan(Math.max(60, took / 4));
  } finally {
    threaded.close();
    await direct.close();
  }
}, 60_000);

test('ThreadedEmbedder reports a model it cannot load, or files it cannot find, as unavailable', async () => {
  const bad = new ThreadedEmbedder(() => ({ modelDir: '/nonexistent', wasmDir: useFiles().wasmDir }));
  await expect(bad.embed(['x'])).rejects.toThrow(/could not be loaded/);
  bad.close();
  const missing = new ThreadedEmbedder(() => {
    throw new Error('no such asset group');
  });
  await expect(missing.embed(['x'])).rejects.toThrow(/not available: no such asset group/);
}, 30_000);
