/** `vidq nodes` (issue 33): the cluster's nodes as the catalog has them. */
import type { Catalog } from '../storage/catalog';
import { listNodes } from '../storage/repositories/nodes';
import { HEARTBEAT_GRACE_MS } from './heartbeat';

export async function listNodesCommand(
  s: { catalog: Catalog },
  o: { all: boolean; json: boolean; now?: Date; print?: (line: string) => void },
): Promise<number> {
  const print = o.print ?? ((l: string) => console.log(l));
  const now = o.now ?? new Date();
  const since = new Date(now.getTime() - HEARTBEAT_GRACE_MS);
  const rows = await listNodes(s.catalog, o.all ? undefined : since);
  const nodes = rows.map((n) => ({
    id: n.id,
    host: n.host,
    role: n.role,
    version: n.version,
    pid: n.pid,
    jobs: n.jobs,
    started_at: n.startedAt.toISOString(),
    last_seen: n.lastSeen.toISOString(),
    alive: n.lastSeen >= since,
  }));
  if (o.json) {
    print(JSON.stringify({ database: s.catalog.dialect, nodes }));
    return 0;
  }
  if (!nodes.length) {
    print(`no node is running on this catalog (${s.catalog.dialect}); serve and vidq worker register themselves`);
    return 0;
  }
  const ago = (iso: string) => `${Math.max(0, Math.round((now.getTime() - Date.parse(iso)) / 1000))} s ago`;
  const table = [
    ['NODE', 'HOST', 'ROLE', 'VERSION', 'PID', 'JOBS', 'LAST SEEN', ...(o.all ? ['STATE'] : [])],
    ...nodes.map((n) => [
      n.id,
      n.host,
      n.role,
      n.version,
      String(n.pid),
      String(n.jobs),
      ago(n.last_seen),
      ...(o.all ? [n.alive ? 'alive' : 'gone'] : []),
    ]),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  for (const r of table)
    print(
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    );
  return 0;
}
