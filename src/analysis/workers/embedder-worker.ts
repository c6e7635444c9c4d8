/**
 * The question embedder of the HTTP server, in a Bun Worker of its own: the model runs on the tfjs
 * wasm backend, synchronously, 10–30 ms a question (more while analysis keeps the cores busy). On
 * the server's thread every other request waited for it; here only the question does.
 *
 * Texts in, L2-normalised vectors out (moved, not copied), one request at a time.
 */
import { EngineUnavailableError } from '../contracts';
import { UseEmbedder } from '../engines/embedder';
import type { EmbedderRequest, EmbedderResponse } from '../engines/embedder-thread';
import { nameThisThread } from './thread-info';

declare var self: Worker;

let embedder: UseEmbedder | null = null;

function send(msg: EmbedderResponse, transfer: ArrayBuffer[] = []): void {
  self.postMessage(msg, transfer);
}

nameThisThread('vidq-embedder');
self.onmessage = async (ev: MessageEvent<EmbedderRequest>) => {
  const m = ev.data;
  if (m.type === 'init') {
    embedder = new UseEmbedder({ files: { modelDir: m.modelDir, wasmDir: m.wasmDir } });
    return;
  }
  if (m.type === 'embed') {
    try {
      if (!embedder) throw new Error('the embedder was not initialised');
      const vectors = await embedder.embed(m.texts);
      const buffers = vectors.map((v) => v.buffer as ArrayBuffer);
      send({ type: 'result', id: m.id, vectors: buffers }, buffers);
    } catch (e) {
      send({
        type: 'error',
        id: m.id,
        message: (e as Error)?.message ?? String(e),
        unavailable: e instanceof EngineUnavailableError,
      });
    }
  }
};
