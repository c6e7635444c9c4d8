// The view of an index: its videos, search, people, and questions about all of them.
import { ApiError, api, getJson, type Json } from '../api';
import { focusHeading, fmtBytes, fmtTime, h, stageLabel, toast, waitingLabel } from '../dom';
import { route, S } from '../state';
import { askPanel } from './ask';
import { liveBoard } from './live';
import { peoplePanel } from './people';
import { searchPanel } from './search';
import { addVideoForm, dropZone, renderUploads, uploadsSection } from './uploads';

export async function findIndex(indexId: string): Promise<Json> {
  const all: Json[] = await getJson('/indexes?include_deleted=true');
  const idx = all.find((i) => i.index_id === indexId);
  if (!idx) throw new ApiError(404, 'There is no such index (or it was purged).');
  return idx;
}

export async function viewIndex(main: HTMLElement, indexId: string) {
  const idx = await findIndex(indexId);
  document.title = `${idx.name} · vidq`;
  const crumbs = h(
    'nav',
    { class: 'crumbs', 'aria-label': 'Breadcrumb' },
    h('a', { href: '#/' }, 'Indexes'),
    ' › ',
    h('span', { 'aria-current': 'page' }, idx.name),
  );
  if (idx.deleted) {
    main.replaceChildren(
      crumbs,
      h('h1', { tabindex: -1 }, idx.name),
      h(
        'p',
        { class: 'note' },
        'This index is deleted; it can be restored until it is purged. ',
        h(
          'button',
          {
            type: 'button',
            onclick: async () => (
              await api(`/indexes/${encodeURIComponent(indexId)}/restore`, { method: 'POST' }), route()
            ),
          },
          'Restore',
        ),
      ),
    );
    focusHeading(main);
    return;
  }
  const list = h('ul', { class: 'videos', 'aria-busy': 'true' });
  const ask = askPanel({ indexId });
  const people = peoplePanel(idx);
  let readyShown = -1;
  main.replaceChildren(
    crumbs,
    h('h1', { tabindex: -1 }, idx.name),
    h(
      'div',
      { class: 'split' },
      h(
        'div',
        { class: 'col' },
        h('section', { class: 'card', 'aria-labelledby': 'v-h' }, h('h2', { id: 'v-h' }, 'Videos'), list),
        searchPanel(idx),
        people,
        addVideoForm(idx),
        dropZone(() => ({ ref: idx.index_id, label: idx.name })),
        uploadsSection(idx),
      ),
      h('aside', { class: 'col side' }, ask),
    ),
  );
  renderUploads();
  focusHeading(main);

  // Live streams show as tiles that refresh themselves (their resources stay `ready`).
  const board = liveBoard(idx);
  let timer = 0;
  let stopped = false;
  S.cleanup.push(() => ((stopped = true), clearTimeout(timer)));
  const load = async () => {
    const rs: Json[] = await getJson(`/index-resources?index=${encodeURIComponent(indexId)}`);
    if (stopped) return;
    list.setAttribute('aria-busy', 'false');
    list.replaceChildren(
      ...(rs.length
        ? rs.map((r) => (r.live ? board.tile(r, [removeButton(idx, r, load)]) : videoRow(idx, r, load)))
        : [h('li', { class: 'empty muted' }, 'No videos: add one by its URL.')]),
    );
    // The people change when a video's analysis ends (or a video goes).
    const ready = rs.filter((r) => r.status === 'ready').length;
    if (ready !== readyShown) (readyShown = ready), people.refresh();
    if (rs.some((r) => r.status !== 'ready' && r.status !== 'failed'))
      timer = setTimeout(() => load().catch(() => {}), 1500);
  };
  S.onIndexesChanged = () => (clearTimeout(timer), load().catch(() => {}));
  S.cleanup.push(() => (S.onIndexesChanged = null));
  await load();
}

/** The button that removes a video (or a live stream's resource) from its index, after asking. */
function removeButton(idx: Json, r: Json, reload: () => Promise<void>) {
  const remove = async () => {
    if (!confirm(`Remove ${r.file_name} from ${idx.name}? Its file and analysis are deleted.`)) return;
    try {
      await api('/remove-from-index', { method: 'POST', body: { project_id: idx.index_id, video_id: r.file_id } });
      toast(`Removed ${r.file_name}.`);
      await reload();
    } catch (e: any) {
      toast(e.message);
    }
  };
  return h(
    'button',
    { type: 'button', class: 'link danger', onclick: remove, 'aria-label': `Remove ${r.file_name}` },
    'Remove',
  );
}

export function videoRow(idx: Json, r: Json, reload: () => Promise<void>) {
  const busy = r.status !== 'ready' && r.status !== 'failed';
  const meta = [
    r.metadata?.duration != null && fmtTime(r.metadata.duration),
    r.metadata?.width && `${r.metadata.width}×${r.metadata.height}`,
    r.metadata?.file_size && fmtBytes(r.metadata.file_size),
  ]
    .filter(Boolean)
    .join(' · ');
  return h(
    'li',
    { class: `video ${r.status}` },
    h(
      'div',
      { class: 'grow' },
      r.status === 'downloading' || (r.status === 'failed' && r.metadata?.duration == null)
        ? h('span', { class: 'name' }, r.file_name)
        : h(
            'a',
            { class: 'name', href: `#/v/${encodeURIComponent(idx.index_id)}/${encodeURIComponent(r.file_id)}` },
            r.file_name,
          ),
      h('span', { class: `badge ${r.status}` }, r.status),
    ),
    h('span', { class: 'muted small' }, meta),
    busy &&
      h('progress', {
        max: 100,
        value: Math.round(r.progress ?? 0),
        'aria-label': `${r.file_name}: ${stageLabel(r.stage)}`,
      }),
    busy &&
      h(
        'span',
        { class: 'small' },
        r.queue_position ? waitingLabel(r) : `${stageLabel(r.stage || r.status)} — ${Math.round(r.progress ?? 0)} %`,
      ),
    r.status === 'failed' && h('p', { class: 'error small' }, `Failed: ${r.error ?? 'unknown reason'}`),
    removeButton(idx, r, reload),
  );
}
