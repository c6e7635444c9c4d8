/**
 * Receives a file sent as the request's own body (POST /upload) into a temporary file: streamed
 * (never buffered whole), hashed on the way, with a size cap, and refused when cut off. Two shapes:
 * the raw bytes as the body, or the `file` part of a multipart/form-data form (parsed as it
 * arrives by @fastify/busboy, never collected into a FormData first).
 */
import Busboy from '@fastify/busboy';
import { ApiError, badRequest, payloadTooLarge, unprocessable } from '../errors';
import { cleanFileName } from './download';

export type UploadBody =
  | { kind: 'raw'; stream: ReadableStream<Uint8Array>; declaredBytes: number | null }
  /** `declaredBytes` is the whole form's length: an upper bound of the file's. */
  | { kind: 'multipart'; stream: ReadableStream<Uint8Array>; contentType: string; declaredBytes: number | null };

export interface ReceiveOptions {
  maxBytes: number;
  /** Name to store when the form part names none (raw bodies always use it). */
  fallbackName: string;
  signal: AbortSignal;
  onProgress?: (received: number, total: number | null) => void;
}

export interface ReceiveResult {
  bytes: number;
  sha256: string;
  fileName: string;
}

/** Longest stretch the write loop keeps the event loop to itself (as the downloader). */
const YIELD_EVERY_MS = 4;
/** Form fields besides the file that a form may carry (ignored); more is not a browser form. */
const MAX_OTHER_PARTS = 20;

const tooLarge = (max: number) =>
  payloadTooLarge(`the file is larger than the upload limit of ${max} bytes (--max-upload-bytes)`);

export async function receiveToFile(body: UploadBody, dest: string, opts: ReceiveOptions): Promise<ReceiveResult> {
  return body.kind === 'raw' ? receiveRaw(body, dest, opts) : receiveMultipart(body, dest, opts);
}

async function receiveRaw(
  body: Extract<UploadBody, { kind: 'raw' }>,
  dest: string,
  opts: ReceiveOptions,
): Promise<ReceiveResult> {
  const reader = body.stream.getReader();
  const cancel = () => void reader.cancel().catch(() => {});
  opts.signal.addEventListener('abort', cancel, { once: true });
  try {
    const total = body.declaredBytes;
    const r = await writeChunks(readAll(reader, opts.signal), dest, total, opts);
    if (total !== null && r.bytes !== total) throw cutOff(r.bytes, total);
    return { ...r, fileName: opts.fallbackName };
  } finally {
    opts.signal.removeEventListener('abort', cancel);
  }
}

async function receiveMultipart(
  body: Extract<UploadBody, { kind: 'multipart' }>,
  dest: string,
  opts: ReceiveOptions,
): Promise<ReceiveResult> {
  let bb: ReturnType<typeof Busboy>;
  try {
    bb = Busboy({
      headers: { 'content-type': body.contentType },
      limits: { files: 1, fields: MAX_OTHER_PARTS, parts: MAX_OTHER_PARTS + 1, fieldSize: 64 * 1024 },
    });
  } catch {
    throw badRequest('the multipart/form-data body has no boundary in its Content-Type');
  }
  let failure: ApiError | null = null;
  const fail = (e: ApiError) => {
    failure ??= e;
    bb.destroy();
  };
  let file: Promise<ReceiveResult> | null = null;
  bb.on('file', (field, stream, filename) => {
    if (field !== 'file' || file) {
      stream.resume();
      return;
    }
    const name = cleanFileName(filename ?? '') || opts.fallbackName;
    file = writeChunks(stream as AsyncIterable<Uint8Array>, dest, body.declaredBytes, opts).then(
      (r) => ({ ...r, fileName: name }),
      (e) => {
        fail(e instanceof ApiError ? e : cutOffForm());
        throw failure;
      },
    );
    file.catch(() => {});
  });
  bb.on('partsLimit', () =>
    fail(badRequest(`the form has more than ${MAX_OTHER_PARTS + 1} parts; send the video as the part named "file"`)),
  );
  const finished = new Promise<void>((resolve, reject) => {
    bb.on('finish', resolve);
    bb.on('error', (e: Error) =>
      reject(
        failure ??
          (/unexpected end/i.test(e.message)
            ? cutOffForm()
            : badRequest(`the multipart/form-data body is malformed: ${e.message}`)),
      ),
    );
    bb.on('close', () => (failure ? reject(failure) : undefined));
  });
  finished.catch(() => {});

  const reader = body.stream.getReader();
  const cancel = () => {
    void reader.cancel().catch(() => {});
    fail(abortReason(opts.signal));
  };
  opts.signal.addEventListener('abort', cancel, { once: true });
  try {
    for await (const chunk of readAll(reader, opts.signal)) {
      if (failure) break;
      if (!bb.write(chunk)) await new Promise<void>((r) => (failure ? r() : bb.once('drain', r).once('close', r)));
    }
    if (failure) throw failure;
    bb.end();
    await finished;
    if (!file)
      throw badRequest('the form has no "file" part; send the video as the part named "file" (curl -F file=@clip.mp4)');
    return await file;
  } catch (e) {
    throw failure ?? e;
  } finally {
    opts.signal.removeEventListener('abort', cancel);
  }
}

/** A body stream's reader, as far as this file uses it. */
interface ChunkReader {
  read(): Promise<{ done: boolean; value?: Uint8Array }>;
}

/** The body's chunks; a read that fails (the client went away) becomes a 400 saying so. */
async function* readAll(reader: ChunkReader, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  for (;;) {
    let r: { done: boolean; value?: Uint8Array };
    try {
      r = await reader.read();
    } catch {
      throw signal.aborted
        ? abortReason(signal)
        : badRequest('the upload was cut off: the connection closed before the end of the body');
    }
    if (signal.aborted) throw abortReason(signal);
    if (r.done) return;
    if (r.value) yield r.value;
  }
}

/** Writes, hashes and counts chunks into `dest`, failing as soon as the cap is passed. */
async function writeChunks(
  source: AsyncIterable<Uint8Array>,
  dest: string,
  total: number | null,
  opts: ReceiveOptions,
): Promise<Omit<ReceiveResult, 'fileName'>> {
  const hasher = new Bun.CryptoHasher('sha256');
  const sink = Bun.file(dest).writer({ highWaterMark: 1 << 20 });
  let received = 0;
  let lastYield = performance.now();
  try {
    for await (const chunk of source) {
      received += chunk.byteLength;
      if (received > opts.maxBytes) throw tooLarge(opts.maxBytes);
      hasher.update(chunk);
      sink.write(chunk);
      opts.onProgress?.(received, total);
      if (opts.signal.aborted) throw abortReason(opts.signal);
      if (performance.now() - lastYield > YIELD_EVERY_MS) {
        await new Promise<void>((r) => setImmediate(r));
        lastYield = performance.now();
      }
    }
  } finally {
    await sink.end();
  }
  if (received === 0) throw unprocessable('the uploaded file is empty');
  return { bytes: received, sha256: hasher.digest('hex') };
}

function abortReason(signal: AbortSignal): ApiError {
  return signal.reason instanceof ApiError ? signal.reason : new ApiError(499, 'the upload was cancelled');
}

const cutOff = (received: number, total: number) =>
  badRequest(`the upload was cut off after ${received} of ${total} bytes; send the whole file again`);
const cutOffForm = () =>
  badRequest(
    'the upload was cut off: the multipart/form-data body ended before its closing boundary; send the whole file again',
  );
