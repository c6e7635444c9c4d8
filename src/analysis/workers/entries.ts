/**
 * Where the Worker entry scripts are. Resolved here, beside them, so that one rule holds both in
 * src/ and in the compiled executable: scripts/build.ts adds each script as an entrypoint named
 * without its folder, next to the main module, which is where this module's code lands too.
 */
export const OBJECTS_WORKER = new URL('./objects-worker.ts', import.meta.url);
export const FACES_WORKER = new URL('./faces-worker.ts', import.meta.url);
export const EMBEDDER_WORKER = new URL('./embedder-worker.ts', import.meta.url);
export const MODERATION_WORKER = new URL('./moderation-worker.ts', import.meta.url);
