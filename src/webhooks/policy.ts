/**
 * When and how often a delivery is tried, shared by the two dispatchers: the outbox poller on SQLite
 * (service.ts) and pg-boss on PostgreSQL (pg-dispatch.ts).
 */

/** Deliveries are retried for this long after the event, then given up (state failed). */
export const RETRY_FOR_MS = 24 * 3600 * 1000;
/** The longest wait between two attempts. */
export const MAX_BACKOFF_MS = 3600 * 1000;
/** Deliveries in flight at once, over all receivers (per node). */
export const MAX_IN_FLIGHT = 32;
/**
 * Deliveries in flight at once to one receiver (by origin): a slow or dead receiver holds this
 * many slots, never the dispatcher (issue 25: one user's dead URL starved everyone's events).
 */
export const MAX_PER_TARGET = 4;

/** Wait before attempt n+1 (n ≥ 1 attempts made): base, 2·base, 4·base… at most an hour. */
export function backoffMs(attempts: number, baseMs: number): number {
  return Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.max(0, attempts - 1));
}

/** The receiver a delivery goes to, for its share of the slots (scheme, host and port). */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
