// Search moments: the search box of an index page and its grid of matching moments.
import { getJson, type Json } from '../api';
import { announce, fmtSpan, fmtTime, h, KINDS, plural, toast } from '../dom';

/** The search box of an index page: a grid of matching moments (frame, time, file, why); a click opens the video there. */
export function searchPanel(idx: Json) {
  const q = h('input', {
    id: 'search-q',
    type: 'text',
    inputmode: 'search',
    name: 'q',
    required: true,
    autocomplete: 'off',
    placeholder: 'e.g. a red car, "exit", someone laughing',
  });
  const grid = h('ul', { class: 'moments', 'aria-live': 'polite' });
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'More moments');
  let next: number | null = null;
  let query = '';
  const load = async (offset: number) => {
    const page: Json = await getJson(
      `/search?index=${encodeURIComponent(idx.index_id)}&q=${encodeURIComponent(query)}&limit=12&offset=${offset}`,
    );
    if (offset === 0) grid.replaceChildren();
    if (offset === 0 && !page.moments.length)
      grid.replaceChildren(h('li', { class: 'empty muted' }, 'No moment matches; try other words.'));
    grid.append(...page.moments.map((m: Json) => momentCard(idx, m)));
    next = page.next_offset;
    more.hidden = next === null;
    announce(`${plural(page.total, 'moment')} found`);
  };
  more.onclick = () => load(next!).catch((e: any) => toast(e.message));
  return h(
    'section',
    { class: 'card search', 'aria-labelledby': 'search-h' },
    h('h2', { id: 'search-h' }, 'Search moments'),
    h(
      'form',
      {
        role: 'search',
        class: 'fields',
        onsubmit: (e: SubmitEvent) => {
          e.preventDefault();
          query = q.value.trim();
          if (query) load(0).catch((err: any) => toast(err.message));
        },
      },
      h('div', { class: 'field grow' }, h('label', { for: 'search-q' }, 'Find'), q),
      h('div', { class: 'field end' }, h('button', { type: 'submit' }, 'Search')),
    ),
    grid,
    more,
  );
}

export function momentCard(idx: Json, m: Json) {
  const why = m.matched === 'both' ? 'words and meaning' : m.matched === 'keyword' ? 'words' : 'meaning';
  return h(
    'li',
    { class: 'moment' },
    h(
      'a',
      {
        href: `#/v/${encodeURIComponent(idx.index_id)}/${encodeURIComponent(m.video_id)}?t=${Math.floor(m.start)}`,
        'aria-label': `${m.file_name} at ${fmtTime(m.start)}: ${m.text}`,
      },
      m.frame_url
        ? h('img', { src: m.frame_url, alt: '', loading: 'lazy', width: 240, height: 135 })
        : h('div', { class: 'noframe' }),
      h('span', { class: 'when' }, `${fmtSpan(m.start, m.end)} · ${m.file_name}`),
      h(
        'span',
        { class: 'what small' },
        `${KINDS[m.kind] ?? m.kind}: ${m.text.length > 90 ? m.text.slice(0, 89) + '…' : m.text}`,
      ),
      h('span', { class: 'why muted small' }, `matched by ${why}`),
    ),
  );
}
