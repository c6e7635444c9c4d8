/**
 * The calling thread's name and CPU time (Linux /proc/thread-self), so that the CPU each stage
 * spends can be told apart on a machine busy with other work: the model Workers name their threads
 * (bench/ingest reports CPU per thread name), and the OCR stage, whose models run on the main
 * thread, sums the thread's CPU over its own work. Elsewhere both are no-ops.
 */
import { readFileSync, writeFileSync } from 'node:fs';

/** Names the calling thread (its `comm`, at most 15 bytes). */
export function nameThisThread(name: string): void {
  try {
    writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    // Not Linux, or no /proc: only the measurement loses its label.
  }
}

/** CPU time (user + system) of the calling thread in ms, at the kernel's tick (10 ms); 0 where unknown. */
export function threadCpuMs(): number {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return 0;
  }
}
