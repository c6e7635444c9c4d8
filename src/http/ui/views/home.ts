// The home view: the indexes, forms to add videos, and the nodes that serve them (issue 33).
import { api, getJson, type Json } from '../api';
import { focusHeading, fmtTime, h, plural, toast } from '../dom';
import { S } from '../state';
import { addVideoForm, dropZone, renderUploads, uploadsSection } from './uploads';

export async function viewHome(main: HTMLElement) {
  document.title = 'Indexes · vidq';
  const form = addVideoForm(null);
  const list = h('ul', { class: 'indexes', 'aria-busy': 'true' });
  const showDeleted = h('input', {
    type: 'checkbox',
    id: 'show-deleted',
    checked: S.showDeleted,
    onchange: (e: Event) => {
      S.showDeleted = (e.target as HTMLInputElement).checked;
      load();
    },
  });
  main.replaceChildren(
    h('h1', { tabindex: -1, class: 'sr-only' }, 'Indexes'),
    form,
    dropZone(() => {
      const name = (document.getElementById('add-index') as HTMLInputElement | null)?.value.trim();
      return name ? { ref: name, label: name } : null;
    }),
    uploadsSection(null),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'idx-h' },
      h(
        'div',
        { class: 'row' },
        h('h2', { id: 'idx-h' }, 'Indexes'),
        h('label', { class: 'check' }, showDeleted, 'Show deleted'),
      ),
      list,
    ),
    nodesSection(),
  );
  renderUploads();
  focusHeading(main);

  let loading = 0;
  async function load() {
    const n = ++loading;
    const all: Json[] = await getJson(`/indexes?include_deleted=${S.showDeleted}`);
    if (n !== loading) return;
    form.setNames(all.filter((i) => !i.deleted).map((i) => i.name));
    list.setAttribute('aria-busy', 'false');
    list.replaceChildren(
      ...(all.length
        ? all.map((i) => indexRow(i, load))
        : [h('li', { class: 'empty muted' }, 'No indexes yet: add a video above and its index is created.')]),
    );
  }
  S.onIndexesChanged = () => load().catch(() => {});
  S.cleanup.push(() => (S.onIndexesChanged = null));
  await load();
}

export function indexRow(i: Json, reload: () => Promise<void>) {
  const act = async (fn: () => Promise<unknown>, done: () => void) => {
    try {
      await fn();
      await reload();
      done();
    } catch (e: any) {
      toast(e.message);
    }
  };
  const restore = () =>
    act(
      () => api(`/indexes/${encodeURIComponent(i.index_id)}/restore`, { method: 'POST' }),
      () => toast(`Restored “${i.name}”.`),
    );
  const del = () =>
    act(
      () => api(`/indexes/${encodeURIComponent(i.index_id)}`, { method: 'DELETE' }),
      () => toast(`Deleted “${i.name}”.`, { label: 'Undo', run: restore }),
    );
  return h(
    'li',
    { class: `index${i.deleted ? ' deleted' : ''}` },
    h(
      'div',
      { class: 'grow' },
      i.deleted
        ? h('span', { class: 'name' }, i.name)
        : h('a', { class: 'name', href: `#/i/${encodeURIComponent(i.index_id)}` }, i.name),
      i.deleted && h('span', { class: 'badge' }, 'deleted'),
    ),
    h(
      'span',
      { class: 'muted small' },
      `${plural(i.count, 'video')} · ${fmtTime(i.total_duration)} · created ${new Date(i.created).toLocaleDateString()}`,
    ),
    i.deleted
      ? h(
          'button',
          { type: 'button', class: 'secondary', onclick: restore, 'aria-label': `Restore ${i.name}` },
          'Restore',
        )
      : h(
          'button',
          { type: 'button', class: 'secondary danger', onclick: del, 'aria-label': `Delete ${i.name}` },
          'Delete',
        ),
  );
}

const ROLES: Record<string, string> = { api: 'API', worker: 'analysis', all: 'API + analysis' };

/** The nodes of the cluster as GET /health reports them: host, role, jobs running, last heartbeat. */
function nodesSection(): HTMLElement {
  const list = h('ul', { class: 'nodes', 'aria-busy': 'true' });
  const summary = h('p', { class: 'muted small' });
  getJson('/health')
    .then((health: Json) => {
      const c = health?.cluster;
      list.setAttribute('aria-busy', 'false');
      if (!c || !Array.isArray(c.nodes)) {
        list.replaceChildren(h('li', { class: 'empty muted' }, 'This server does not report its nodes.'));
        return;
      }
      const now = Date.now();
      list.replaceChildren(
        ...c.nodes.map((n: Json) =>
          h(
            'li',
            { class: 'node' },
            h('span', { class: 'name' }, n.host),
            h('span', { class: 'badge' }, ROLES[n.role] ?? n.role),
            h(
              'span',
              { class: 'muted small' },
              `${plural(n.jobs, 'job')} running · seen ${Math.max(0, Math.round((now - Date.parse(n.last_seen)) / 1000))} s ago${n.id === c.node ? ' · this node' : ''}`,
            ),
          ),
        ),
      );
      summary.textContent = `Catalog: ${c.database === 'postgres' ? 'PostgreSQL' : 'SQLite'} · queue: ${c.queue.waiting} waiting, ${c.queue.active} running, ${c.queue.failed} failed`;
    })
    .catch(() => {
      list.setAttribute('aria-busy', 'false');
      list.replaceChildren(h('li', { class: 'empty muted' }, 'The nodes could not be read.'));
    });
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'nodes-h' },
    h('h2', { id: 'nodes-h' }, 'Nodes'),
    list,
    summary,
  );
}
