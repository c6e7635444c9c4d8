// People (faces grouped across an index): the panel of an index, a timeline lane per person.
import { api, getJson, type Json } from '../api';
import { fmtSpan, fmtTime, h, plural, toast } from '../dom';

/** The People card of an index: a face thumbnail per person; click a name to name them; merge two. */
export function peoplePanel(idx: Json) {
  const base = `/indexes/${encodeURIComponent(idx.index_id)}/people`;
  const grid = h('ul', { class: 'people', 'aria-busy': 'true' });
  const card = h('section', { class: 'card', 'aria-labelledby': 'p-h' }, h('h2', { id: 'p-h' }, 'People'), grid);
  const label = (p: Json, i: number): string => p.name ?? `Person ${i + 1}`;
  const load = async () => {
    const people: Json[] = await getJson(base);
    grid.setAttribute('aria-busy', 'false');
    if (!people.length) return grid.replaceChildren(h('li', { class: 'empty muted' }, 'No faces found yet.'));
    grid.replaceChildren(
      ...people.map((p, i) => {
        const rename = async () => {
          const name = prompt(`Name for ${label(p, i)} (empty to remove the name):`, p.name ?? '');
          if (name === null) return;
          try {
            await api(`${base}/${encodeURIComponent(p.person_id)}`, {
              method: 'PUT',
              body: { name: name.trim() || null },
            });
            await load();
          } catch (e: any) {
            toast(e.message);
          }
        };
        const into = h(
          'select',
          { 'aria-label': `Merge ${label(p, i)} into` },
          h('option', { value: '' }, 'Merge into…'),
          ...people.filter((o) => o !== p).map((o) => h('option', { value: o.person_id }, label(o, people.indexOf(o)))),
        );
        into.addEventListener('change', async () => {
          if (!into.value) return;
          try {
            await api(`${base}/${encodeURIComponent(p.person_id)}/merge`, {
              method: 'POST',
              body: { into: into.value },
            });
            toast(`Merged ${label(p, i)}.`);
            await load();
          } catch (e: any) {
            toast(e.message);
          }
        });
        // The appearances, on demand: each links to its moment; a wrongly grouped one can be split out.
        const apps = h('ul', { class: 'appearances small', hidden: true });
        const showApps = async () => {
          if (!apps.hidden) return (apps.hidden = true);
          const d: Json = await getJson(`${base}/${encodeURIComponent(p.person_id)}`);
          apps.replaceChildren(
            ...d.appearances.map((a: Json) =>
              h(
                'li',
                null,
                h(
                  'a',
                  {
                    href: `#/v/${encodeURIComponent(idx.index_id)}/${encodeURIComponent(a.video_id)}?t=${Math.floor(a.start)}`,
                  },
                  `${a.file_name} ${fmtSpan(a.start, a.end)}`,
                ),
                d.appearances.length > 1 &&
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'link',
                      'aria-label': `Split ${fmtSpan(a.start, a.end)} out of ${label(p, i)}`,
                      onclick: async () => {
                        try {
                          await api(`${base}/${encodeURIComponent(p.person_id)}/split`, {
                            method: 'POST',
                            body: { appearance_id: a.appearance_id },
                          });
                          toast('Split out into a new person.');
                          await load();
                        } catch (e: any) {
                          toast(e.message);
                        }
                      },
                    },
                    'Split out',
                  ),
              ),
            ),
          );
          apps.hidden = false;
        };
        return h(
          'li',
          { class: 'person' },
          h(
            'button',
            {
              type: 'button',
              class: 'face',
              onclick: () => showApps().catch((e: any) => toast(e.message)),
              'aria-label': `Appearances of ${label(p, i)}`,
            },
            h('img', {
              src: p.thumbnail_url,
              alt: `Face of ${label(p, i)}`,
              width: 80,
              height: 96,
              loading: 'lazy',
              decoding: 'async',
            }),
          ),
          h(
            'button',
            {
              type: 'button',
              class: 'link name',
              onclick: rename,
              title: 'Click to name',
              'aria-label': `Name ${label(p, i)}`,
            },
            label(p, i),
          ),
          h('span', { class: 'muted small' }, `${plural(p.appearance_count, 'appearance')} · ${fmtTime(p.seconds)}`),
          people.length > 1 && into,
          apps,
        );
      }),
    );
  };
  const refresh = () => load().catch((e: any) => grid.replaceChildren(h('li', { class: 'error small' }, e.message)));
  return Object.assign(card, { refresh });
}

/** A person's timeline lane: a name and its appearances as segments. */
export interface PersonLane {
  name: string;
  items: Json[];
}

/** The timeline lanes of the people seen in one video: their appearances there. */
export async function personLanes(indexId: string, fileId: string): Promise<PersonLane[]> {
  const base = `/indexes/${encodeURIComponent(indexId)}/people`;
  const people: Json[] = await getJson(base);
  const here = people.filter((p) => p.videos.includes(fileId));
  const details: Json[] = await Promise.all(here.map((p) => getJson(`${base}/${encodeURIComponent(p.person_id)}`)));
  return details.map((d) => {
    const name = d.name ?? `Person ${people.findIndex((p) => p.person_id === d.person_id) + 1}`;
    return {
      name,
      items: d.appearances
        .filter((a: Json) => a.video_id === fileId)
        .map((a: Json) => ({ kind: 'face', start: a.start, end: a.end, text: name, confidence: null })),
    };
  });
}
