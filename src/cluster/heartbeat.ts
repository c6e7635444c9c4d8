/**
 * The node's heartbeat (issue 33): every `serve` and `vidq worker` registers itself in the catalog's
 * `nodes` table at start, refreshes `last_seen` (and its running jobs) every `intervalMs`, and on a
 * clean stop gives its leases up and leaves the list. A node unseen for `graceMs` counts as gone.
 *
 * The same beat holds the node's leases (repositories/leases.ts): the work it wants to do alone in
 * the cluster (`want(name)`: the maintenance cron, each live stream). Each beat renews the leases
 * it holds and tries to take the wanted ones it does not; a lease runs for `graceMs`, so when a
 * node dies its leases lapse with it, and another node's beat takes each within
 * `graceMs + intervalMs` (20 s by default; issue 33 asks for 30 s). A node whose beats fail (the
 * database out of reach) counts its leases as lost once they may have lapsed, before anyone else
 * can have taken them: two nodes never act on one lease at once.
 *
 * Times are this machine's clock: the nodes' clocks must agree within a few seconds (NTP).
 */
import { hostname } from 'node:os';
import { randomId } from '../ids';
import type { Logger } from '../log';
import type { Catalog } from '../storage/catalog';
import { releaseLease, releaseLeasesOf, takeLease } from '../storage/repositories/leases';
import {
  type ClusterNode,
  listNodes,
  type NodeRole,
  pruneNodes,
  registerNode,
  removeNode,
  touchNode,
} from '../storage/repositories/nodes';
import { VERSION } from '../version';

/** The lease of the cluster-wide maintenance (purges, stuck work, the live retention purge). */
export const MAINTENANCE_LEASE = 'cron:maintenance';

/** How often a node says it is alive. @default 5000 */
export const HEARTBEAT_INTERVAL_MS = 5_000;
/** A node unseen this long is gone, and a lease not renewed this long lapses. @default 15000 */
export const HEARTBEAT_GRACE_MS = 15_000;
/** Rows of nodes unseen this long (killed, never stopped cleanly) are deleted. */
const FORGET_AFTER_MS = 24 * 3600_000;

export interface LeaseHandlers {
  /** This node now holds the lease: start the work. */
  gained?: () => void;
  /** This node no longer holds it (taken over after a lost beat, or the database unreachable): stop the work. */
  lost?: () => void;
}

export interface HeartbeatOptions {
  catalog: Catalog;
  role: NodeRole;
  log: Logger;
  /** Analysis jobs running in this node now. */
  jobs?: () => number | Promise<number>;
  /** @default HEARTBEAT_INTERVAL_MS */
  intervalMs?: number;
  /** @default HEARTBEAT_GRACE_MS */
  graceMs?: number;
  /** @default os.hostname() */
  host?: string;
  /** The clock (tests). */
  now?: () => Date;
}

export class Heartbeat {
  /** This process's node id: new at each start. */
  readonly id = `node_${randomId(16)}`;
  readonly host: string;
  readonly role: NodeRole;
  private readonly interval: number;
  private readonly grace: number;
  private readonly now: () => Date;
  private readonly wanted = new Map<string, LeaseHandlers>();
  /** Held leases, with when each was last renewed (this clock). */
  private readonly held = new Map<string, number>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private beating: Promise<void> | null = null;
  private stopped = false;
  private startedAt: Date;

  constructor(private readonly o: HeartbeatOptions) {
    this.host = o.host ?? hostname();
    this.role = o.role;
    this.interval = o.intervalMs ?? HEARTBEAT_INTERVAL_MS;
    this.grace = o.graceMs ?? HEARTBEAT_GRACE_MS;
    this.now = o.now ?? (() => new Date());
    this.startedAt = this.now();
  }

  /** Registers the node, takes the leases wanted so far, and beats every interval. */
  async start(): Promise<void> {
    this.startedAt = this.now();
    await this.reapDeadNeighbours();
    await registerNode(this.o.catalog, this.row(this.startedAt, await this.jobs()));
    await this.beat();
    this.timer = setInterval(() => void this.beat(), this.interval);
    this.timer.unref?.();
  }

  /** One beat (the timer's; tests call it with their clock). Never throws: a failure is logged. */
  beat(): Promise<void> {
    this.beating ??= this.beatOnce().finally(() => {
      this.beating = null;
    });
    return this.beating;
  }

  private async beatOnce(): Promise<void> {
    if (this.stopped) return;
    const c = this.o.catalog;
    const now = this.now();
    try {
      const jobs = await this.jobs();
      if (!(await touchNode(c, this.id, now, jobs))) await registerNode(c, this.row(now, jobs));
      for (const [name, handlers] of this.wanted) {
        if (this.stopped) return;
        const had = this.held.has(name);
        const has = await takeLease(c, name, this.id, this.grace, now);
        if (!this.wanted.has(name)) {
          // Unwanted while the statement ran: give it back.
          if (has) await releaseLease(c, name, this.id);
          continue;
        }
        if (has) this.held.set(name, now.getTime());
        else this.held.delete(name);
        if (has && !had) this.call(name, handlers.gained);
        if (!has && had) this.call(name, handlers.lost);
      }
      await pruneNodes(c, new Date(now.getTime() - FORGET_AFTER_MS));
    } catch (e) {
      this.o.log.warn('heartbeat failed', { node: this.id, reason: (e as Error).message });
      // Leases renewed too long ago may have lapsed and been taken by another node: stop their work.
      const margin = this.grace - this.interval;
      for (const [name, renewed] of this.held)
        if (now.getTime() - renewed >= margin) {
          this.held.delete(name);
          this.call(name, this.wanted.get(name)?.lost);
        }
    }
  }

  private call(name: string, fn: (() => void) | undefined): void {
    try {
      fn?.();
    } catch (e) {
      this.o.log.error('lease handler failed', { lease: name, reason: (e as Error).message });
    }
  }

  /**
   * Wants a lease while `unwant` is not called: the next beat takes it if it is free (or lapsed),
   * and `gained` runs; `lost` runs when it goes. `now` asks for it at once rather than at the next beat.
   */
  async want(name: string, handlers: LeaseHandlers = {}, now = false): Promise<boolean> {
    this.wanted.set(name, handlers);
    if (now && !this.stopped) {
      const at = this.now();
      if (await takeLease(this.o.catalog, name, this.id, this.grace, at)) {
        if (!this.held.has(name)) {
          this.held.set(name, at.getTime());
          this.call(name, handlers.gained);
        } else this.held.set(name, at.getTime());
      }
    }
    return this.held.has(name);
  }

  /** No longer wanted: released (without calling `lost`: the caller stopped the work). */
  async unwant(name: string): Promise<void> {
    this.wanted.delete(name);
    if (this.held.delete(name)) await releaseLease(this.o.catalog, name, this.id).catch(() => false);
  }

  /** Whether this node holds the lease (as of its last beat). */
  holds(name: string): boolean {
    return this.held.has(name);
  }

  /** The nodes seen within the grace: the cluster as it stands. */
  nodes(): Promise<ClusterNode[]> {
    return listNodes(this.o.catalog, new Date(this.now().getTime() - this.grace));
  }

  /**
   * Nodes of this host whose process is gone (a crash, kill -9) are removed with their leases at
   * once, rather than after the grace: a restarted server resumes its live streams and cron
   * without waiting 20 s. A node with this process's pid that started before this process is a
   * previous life of it (a restarted container); any other pid is asked with signal 0.
   */
  private async reapDeadNeighbours(): Promise<void> {
    const c = this.o.catalog;
    const processStart = Date.now() - process.uptime() * 1000;
    for (const n of await listNodes(c)) {
      if (n.host !== this.host || n.id === this.id) continue;
      const dead = n.pid === process.pid ? n.startedAt.getTime() < processStart : !processAlive(n.pid);
      if (!dead) continue;
      await releaseLeasesOf(c, n.id);
      await removeNode(c, n.id);
      this.o.log.info('removed a node of this host whose process is gone', { node: n.id, pid: n.pid });
    }
  }

  /** Stops beating, gives every lease up and leaves the list. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.beating?.catch(() => {});
    this.held.clear();
    this.wanted.clear();
    const c = this.o.catalog;
    await releaseLeasesOf(c, this.id).catch(() => 0);
    await removeNode(c, this.id).catch(() => {});
  }

  private async jobs(): Promise<number> {
    try {
      return (await this.o.jobs?.()) ?? 0;
    } catch {
      return 0;
    }
  }

  private row(at: Date, jobs: number): ClusterNode {
    return {
      id: this.id,
      host: this.host,
      role: this.role,
      version: VERSION,
      pid: process.pid,
      startedAt: this.startedAt,
      lastSeen: at,
      jobs,
    };
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, as another user's process.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
