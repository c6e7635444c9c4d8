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
  | { kind: 'multipart'; form: OpenForm; declaredBytes: number | null };

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
/** Parts a form may carry besides the file (fields, or other files, skipped); more is not a browser form. */
const MAX_OTHER_PARTS = 20;
/** Size of one text field of a form (token, index, file_name, webhook_url are all far shorter). */
const MAX_FIELD_BYTES = 64 * 1024;
/**
 * Room for what a form carries around its file (boundaries, part headers, fields, skipped parts):
 * the whole body is counted, so a form is at most --max-upload-bytes plus this.
 */
export const FORM_OVERHEAD_BYTES = 1 << 20;
/** Form fields read before the `file` part; the upload's admission may take them from here. */
export const FORM_FIELDS = ['token', 'index', 'file_name', 'webhook_url'] as const;
export type FormFields = Partial<Record<(typeof FORM_FIELDS)[number], string>>;

const tooLarge = (max: number) =>
  payloadTooLarge(`the file is larger than the upload limit of ${max} bytes (--max-upload-bytes)`);

export async function receiveToFile(body: UploadBody, dest: string, opts: ReceiveOptions): Promise<ReceiveResult> {
  return body.kind === 'raw' ? receiveRaw(body, dest, opts) : body.form.receive(dest, opts);
}

async function receiveRaw(
  body: Extract<UploadBody, { kind: 'raw' }>,
  dest: string,
  opts: ReceiveOptions,
): Promise<ReceiveResult> {
  const reader = body.stream.getReader();
  let cancelled = false;
  const cancel = () => {
    cancelled = true;
    void reader.cancel().catch(() => {});
  };
  opts.signal.addEventListener('abort', cancel, { once: true });
  try {
    const total = body.declaredBytes;
    const r = await writeChunks(readAll(reader, opts.signal), dest, total, opts);
    if (total !== null && r.bytes !== total) throw cutOff(r.bytes, total);
    return { ...r, fileName: opts.fallbackName };
  } finally {
    opts.signal.removeEventListener('abort', cancel);
    // The rest of a refused body can then be read by the HTTP layer (so the client sees the answer).
    if (!cancelled) reader.releaseLock();
  }
}

export interface FormLimits {
  /** The whole body's cap: --max-upload-bytes plus FORM_OVERHEAD_BYTES. */
  maxBodyBytes: number;
  /** The parser may wait this long for bytes, or for its file part to be read, before the form is refused. */
  idleMs: number;
  /** The whole form must arrive within this. */
  deadlineMs: number;
}

/**
 * A multipart/form-data body being parsed as it arrives. Opened before the upload is admitted:
 * `fields` are the text fields sent before the `file` part (the hosted API's way to send the token
 * and index), and nothing is written until `receive`. Every other part (a second file, unknown
 * fields) is read and dropped, and counts against the body's cap.
 */
export interface OpenForm {
  fields: FormFields;
  /** Streams the `file` part into `dest` and waits for the end of the form. */
  receive(dest: string, opts: ReceiveOptions): Promise<ReceiveResult>;
  /** The upload was refused before `receive`: stop parsing (the HTTP layer reads what is left). */
  abandon(): Promise<void>;
}

/**
 * Starts parsing a form; resolves once its `file` part begins (with the fields before it), or the
 * form ends without one (400). Refusals (malformed, too many parts, too large, too slow) reject.
 */
export async function openForm(
  stream: ReadableStream<Uint8Array>,
  contentType: string,
  declaredBytes: number | null,
  limits: FormLimits,
): Promise<OpenForm> {
  let bb: ReturnType<typeof Busboy>;
  try {
    // The parser's own limits stay above ours: its files limit skips a part in a way that stalls
    // (a second file part after the first one never let the body finish: issue 25), so every part
    // is handed to us and we drop the ones we do not use.
    bb = Busboy({
      headers: { 'content-type': contentType },
      limits: {
        files: MAX_OTHER_PARTS + 1,
        fields: MAX_OTHER_PARTS + 1,
        parts: MAX_OTHER_PARTS + 2,
        fieldSize: MAX_FIELD_BYTES,
      },
    });
  } catch {
    throw badRequest('the multipart/form-data body has no boundary in its Content-Type');
  }
  const fields: FormFields = {};
  let failure: ApiError | null = null;
  let fileStream: NodeJS.ReadableStream | null = null;
  let fileName = '';
  let opened: (v: boolean) => void = () => {};
  const fileOpened = new Promise<boolean>((r) => (opened = r));
  const fail = (e: ApiError) => {
    failure ??= e;
    bb.destroy();
    // Ends the file's reader too (the parser leaves its part stream open).
    (fileStream as { destroy?: (e: Error) => void } | null)?.destroy?.(failure);
    wake();
  };
  // One waiter at a time (the pump's): woken by the parser's drain, its close, or a failure.
  let waiter: (() => void) | null = null;
  const wake = () => {
    const w = waiter;
    waiter = null;
    w?.();
  };
  bb.on('drain', wake);
  bb.on('close', wake);

  bb.on('field', (name: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
    if (!(FORM_FIELDS as readonly string[]).includes(name) || fileStream) return;
    if (valueTruncated) return fail(badRequest(`form field "${name}" is longer than ${MAX_FIELD_BYTES} bytes`));
    fields[name as keyof FormFields] = value;
  });
  bb.on('file', (field: string, stream: NodeJS.ReadableStream, filename: string | undefined) => {
    if (field !== 'file' || fileStream) {
      // Read and dropped; its bytes still count against the body's cap.
      stream.on('error', () => {});
      stream.resume();
      return;
    }
    fileStream = stream;
    // Its failures reach the reader (writeChunks); a form refused before then has none.
    stream.on('error', () => {});
    fileName = cleanFileName(filename ?? '');
    opened(true);
  });
  const limitHit = () =>
    fail(
      badRequest(
        `the form has more than ${MAX_OTHER_PARTS} parts besides the file; send the video as the part named "file"`,
      ),
    );
  bb.on('partsLimit', limitHit);
  bb.on('filesLimit', limitHit);
  bb.on('fieldsLimit', limitHit);
  const finished = new Promise<void>((resolve, reject) => {
    bb.on('finish', () => {
      opened(false);
      resolve();
    });
    bb.on('error', (e: Error) => {
      const err =
        failure ??
        (/unexpected end/i.test(e.message)
          ? cutOffForm()
          : badRequest(`the multipart/form-data body is malformed: ${e.message}`));
      failure ??= err;
      opened(false);
      reject(err);
    });
    bb.on('close', () => {
      if (failure) {
        opened(false);
        reject(failure);
      }
    });
  });
  finished.catch(() => {});

  // The pump: the body's bytes into the parser, counted whole, with the parser's backpressure,
  // an idle limit (no byte, or a part nobody reads) and a deadline for the whole form.
  const reader = stream.getReader();
  let stop = false;
  let received = 0;
  const started = Date.now();
  let watchdog: ReturnType<typeof setTimeout> | null = null;
  const arm = () => {
    if (watchdog) clearTimeout(watchdog);
    const left = limits.deadlineMs - (Date.now() - started);
    watchdog = setTimeout(
      () => {
        const late = Date.now() - started >= limits.deadlineMs;
        fail(
          new ApiError(
            408,
            late
              ? `the form did not arrive within ${limits.deadlineMs} ms; send it again`
              : `the form stalled: nothing moved for ${limits.idleMs} ms; send it again`,
          ),
        );
        void reader.cancel().catch(() => {});
      },
      Math.max(0, Math.min(limits.idleMs, left)),
    );
  };
  const pump = (async () => {
    try {
      arm();
      for (;;) {
        let r: { done: boolean; value?: Uint8Array };
        try {
          r = await reader.read();
        } catch {
          fail(failure ?? badRequest('the upload was cut off: the connection closed before the end of the body'));
          return;
        }
        if (stop || failure) return;
        if (r.done) break;
        arm();
        received += r.value?.byteLength ?? 0;
        if (!fileStream && received > FORM_OVERHEAD_BYTES) {
          // Before the file, a form carries only small fields: this bounds what the server reads
          // before it can even authenticate a token sent in the form.
          fail(
            badRequest(
              `the form carries more than ${FORM_OVERHEAD_BYTES} bytes before its "file" part; send the fields (token, index) first and the video as the part named "file"`,
            ),
          );
          return;
        }
        if (received > limits.maxBodyBytes) {
          fail(
            payloadTooLarge(
              `the form is larger than the upload limit (${limits.maxBodyBytes - FORM_OVERHEAD_BYTES} bytes, --max-upload-bytes, plus ${FORM_OVERHEAD_BYTES} for the form's fields and boundaries)`,
            ),
          );
          return;
        }
        if (r.value && !bb.write(r.value)) {
          await new Promise<void>((res) => {
            waiter = res;
            if (failure || stop) wake();
          });
          arm();
        }
      }
      bb.end();
      arm();
      await finished.catch(() => {});
    } finally {
      if (watchdog) clearTimeout(watchdog);
      watchdog = null;
      // Left unlocked: the HTTP layer reads what is left of a refused body, so the client reads the answer.
      try {
        reader.releaseLock();
      } catch {}
    }
  })();

  const hasFile = await fileOpened;
  if (!hasFile) {
    await pump;
    if (failure) throw failure;
    throw badRequest('the form has no "file" part; send the video as the part named "file" (curl -F file=@clip.mp4)');
  }
  const file = fileStream as unknown as NodeJS.ReadableStream;
  return {
    fields,
    async abandon() {
      stop = true;
      bb.destroy();
      wake();
      await pump;
    },
    async receive(dest, opts) {
      const onAbort = () => fail(abortReason(opts.signal));
      if (opts.signal.aborted) onAbort();
      opts.signal.addEventListener('abort', onAbort, { once: true });
      let written: Promise<Omit<ReceiveResult, 'fileName'>> | null = null;
      try {
        if (failure) throw failure;
        written = writeChunks(file as AsyncIterable<Uint8Array>, dest, declaredBytes, opts);
        written.catch(() => {});
        // Whichever ends first: the file (then the rest of the form) or a failure of the form.
        const r = await Promise.race([written, finished.then(() => written!)]).catch((e) => {
          fail(e instanceof ApiError ? e : cutOffForm());
          throw failure;
        });
        await finished;
        await pump;
        if (failure) throw failure;
        return { ...r, fileName: fileName || opts.fallbackName };
      } catch (e) {
        stop = true;
        wake();
        await pump;
        // The file's writer is closed before the caller deletes what it wrote.
        await written?.catch(() => {});
        throw failure ?? e;
      } finally {
        opts.signal.removeEventListener('abort', onAbort);
      }
    },
  };
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
