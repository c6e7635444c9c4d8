/**
 * Request bodies: limited by us rather than by Bun, so that a body over `--max-body-bytes` is
 * refused with the spec's error shape (Bun's own limit answers an empty 413) and is never read
 * whole. A declared Content-Length over the limit is refused before a byte is read; a chunked body
 * (no Content-Length) is read through a counter that fails the read as soon as it passes the limit.
 * Every body of this API is a JSON object; anything else is refused before validation, which would
 * otherwise fill in defaults and report a missing token.
 */
import { badRequest, payloadTooLarge } from '../errors';
import { UPLOAD_PATH_PREFIX } from '../ingest/grants';

/** Paths whose body is a file, not a JSON object: the route reads it as a stream. */
export const RAW_BODY_PATHS = new Set(['/upload']);

/**
 * POST paths whose JSON carries an image (base64 or a URL): they get --max-image-body-bytes, every
 * other body keeps --max-body-bytes, so only these few can make the server hold megabytes.
 */
export const IMAGE_BODY_PATHS = new Set(['/search', '/core/search', '/stream']);

/** The body limit of a request: the image endpoints' larger one, or the general one. */
export function bodyLimitOf(request: Request, limits: { maxBodyBytes: number; maxImageBodyBytes: number }): number {
  if (request.method !== 'POST') return limits.maxBodyBytes;
  return IMAGE_BODY_PATHS.has(new URL(request.url).pathname)
    ? Math.max(limits.maxImageBodyBytes, limits.maxBodyBytes)
    : limits.maxBodyBytes;
}

/** Bun's own limit stays only as a backstop far above ours, since it answers without a body. */
export const NATIVE_BODY_LIMIT = 2 ** 40;

export const NOT_A_JSON_OBJECT =
  'the request body must be a JSON object with the documented fields (Content-Type: application/json)';

const tooLarge = (max: number) =>
  payloadTooLarge(
    `the request body is larger than the limit of ${max} bytes of this endpoint (--max-body-bytes, --max-image-body-bytes where an image is taken); send only the documented JSON fields`,
  );

/**
 * Checks a request's body before anything reads it. Returns the request to use: the same one, or
 * for a chunked body one whose body stream fails with 413 once it passes `maxBytes`.
 */
export function limitBody(request: Request, maxBytes: number): Request {
  // POST /upload streams its body to disk under its own cap (--max-upload-bytes); see routes/file-upload.ts.
  const path = new URL(request.url).pathname;
  if (request.method === 'POST' && RAW_BODY_PATHS.has(path)) return request;
  // A signed upload URL's PUT carries the file (POST /api-pre-upload; capped by the size it was signed for).
  if (request.method === 'PUT' && path.startsWith(UPLOAD_PATH_PREFIX)) return request;
  const declared = request.headers.get('content-length');
  if (declared !== null) {
    if (!/^\d+$/.test(declared.trim())) throw badRequest('the Content-Length header is not a number');
    if (Number(declared) > maxBytes) throw tooLarge(maxBytes);
  }
  if (!request.body || declared?.trim() === '0') return request;
  // One rule for every POST: a body is JSON, declared as such; a missing Content-Type is refused
  // like any other (400, before authentication), so no endpoint guesses how to read it.
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json' && !type.endsWith('+json')) throw badRequest(NOT_A_JSON_OBJECT);
  if (declared !== null) return request; // Bun never delivers more than the declared length
  let seen = 0;
  const counter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > maxBytes) controller.error(tooLarge(maxBytes));
      else controller.enqueue(chunk);
    },
  });
  return new Request(request.url, {
    method: request.method,
    headers: request.headers,
    body: request.body.pipeThrough(counter),
    signal: request.signal,
    duplex: 'half',
  } as RequestInit);
}

/** Deeper than any body of this API (they are flat objects of strings). */
const MAX_DEPTH = 16;
/** More values than any body of this API has (a handful of fields): checking stops as soon as it is passed. */
const MAX_VALUES = 256;

/**
 * After parsing, before validation: a body that was sent must be a JSON object (not null, an
 * array, a string…), nest no deeper than MAX_DEPTH (validating a 20000-level array overflowed the
 * stack: a 500), and carry no `__proto__` key: JSON.parse keeps it as a plain key, but Elysia's
 * filling in of defaults copies the fields nested under it into the body itself (a `token` sent
 * as `{"__proto__": {"token": …}}` authenticated, past the field's own validation).
 */
export function checkParsedBody(body: unknown): void {
  if (body === undefined) return;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest(NOT_A_JSON_OBJECT);
  // Iterative, so that checking depth cannot itself overflow the stack.
  const stack: { value: object; depth: number }[] = [{ value: body, depth: 1 }];
  // Counted before anything is walked or validated: a body of 100k array elements costs a 400 at
  // once, not a walk (and Elysia's validation after it) for a request that is not even authenticated.
  let values = 0;
  while (stack.length) {
    const { value, depth } = stack.pop()!;
    if (depth > MAX_DEPTH)
      throw badRequest(`the request body nests deeper than ${MAX_DEPTH} levels; send the documented fields as strings`);
    if (Object.hasOwn(value, '__proto__')) throw badRequest('the request body must not contain the key "__proto__"');
    values += Array.isArray(value) ? value.length : Object.keys(value).length;
    if (values > MAX_VALUES)
      throw badRequest(`the request body holds more than ${MAX_VALUES} values; send only the documented fields`);
    for (const v of Object.values(value))
      if (v !== null && typeof v === 'object') stack.push({ value: v, depth: depth + 1 });
  }
}

/**
 * How much of a refused request's body is read and dropped before the answer: a client that sends
 * the whole body before reading (Python's urllib, many simple HTTP clients) otherwise meets a
 * closed connection and never sees the error. Larger or slower bodies are cut off as before.
 */
const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
const DRAIN_MAX_MS = 10_000;

/**
 * Reads and drops what is left of a request's body, if any is unread and it is small enough;
 * never throws. Bun closes the connection of an answered request whose body was not read.
 */
export async function drainBody(request: Request): Promise<void> {
  const body = request.body;
  if (!body || body.locked || request.bodyUsed) return;
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > DRAIN_MAX_BYTES) return;
  let reader: { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> };
  try {
    reader = body.getReader();
  } catch {
    return;
  }
  const timer = setTimeout(() => void reader.cancel().catch(() => {}), DRAIN_MAX_MS);
  let seen = 0;
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      seen += r.value?.byteLength ?? 0;
      if (seen > DRAIN_MAX_BYTES) {
        await reader.cancel().catch(() => {});
        break;
      }
    }
  } catch {
    // Cut off, timed out or failed (a 413 of a chunked body): the answer goes out as it is.
  } finally {
    clearTimeout(timer);
  }
}
