/** A generator failure the caller reports as the fallback reason (its message is safe to show: no secrets). */
export class GeneratorError extends Error {
  override readonly name = 'GeneratorError';
}
