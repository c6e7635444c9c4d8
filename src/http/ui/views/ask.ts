// Questions: the form and its streamed answer with citations.
import { api, events, getJson, type Json } from '../api';
import { fmtSpan, fmtTime, h, KINDS } from '../dom';
import { S } from '../state';

/**
 * The question form and its streamed answer. With a `video`, the scope can be the whole index, the
 * video, or the player's current moment; citation chips seek the player (or open the video).
 */
export function askPanel({
  indexId,
  video,
  player,
  seek,
}: {
  indexId: string;
  video?: Json;
  player?: HTMLVideoElement;
  seek?: (t: number) => void;
}) {
  const id = (s: string) => `ask-${s}`;
  const prompt = h('textarea', {
    id: id('q'),
    name: 'prompt',
    rows: 2,
    required: true,
    maxLength: 8000,
    placeholder: video ? 'e.g. When is the bird visible?' : 'e.g. Which video shows a dog?',
  });
  const scopes = video
    ? [
        ['video', 'This video'],
        ['moment', 'This moment'],
        ['index', 'All videos in the index'],
      ]
    : [];
  const momentLabel = h('span', null, 'This moment (0:00)');
  const radios = scopes.map(([value, label], i) =>
    h(
      'label',
      { class: 'check' },
      h('input', { type: 'radio', name: 'scope', value, checked: i === 0 }),
      value === 'moment' ? momentLabel : label,
    ),
  );
  if (player) {
    const upd = () => (momentLabel.textContent = `This moment (${fmtTime(player.currentTime)})`);
    player.addEventListener('timeupdate', upd);
    player.addEventListener('seeked', upd);
  }
  const submit = h('button', { type: 'submit' }, 'Ask');
  const stop = h('button', { type: 'button', class: 'secondary', hidden: true, onclick: () => ctrl?.abort() }, 'Stop');
  const answer = h('div', { class: 'answer', 'aria-live': 'polite', 'aria-busy': 'false' });
  const model = h('p', { class: 'muted small model' });
  const chips = h('ul', { class: 'chips', 'aria-label': 'Citations' });
  const errorBox = h('p', { class: 'error', role: 'alert' });
  let ctrl: AbortController | null = null;
  S.cleanup.push(() => ctrl?.abort());

  const cite = (e: Json) => {
    if (player && video && e.video_id === video.file_id) seek!(e.start);
    else location.hash = `#/v/${encodeURIComponent(indexId)}/${encodeURIComponent(e.video_id)}?t=${e.start}`;
  };

  const renderChips = (evidence: Json[]) => {
    const many = evidence.length > 8;
    const make = (list: Json[]) =>
      list.map((e) =>
        h(
          'li',
          null,
          h(
            'button',
            {
              type: 'button',
              class: 'chip',
              'data-start': e.start,
              'data-video': e.video_id,
              onclick: () => cite(e),
              'aria-label': `${fmtSpan(e.start, e.end)}${!video || e.video_id !== video.file_id ? ` in ${e.file_name}` : ''}, ${KINDS[e.kind] ?? e.kind}: ${e.text.replace(/\s+/g, ' ').slice(0, 120)}`,
            },
            e.frame_url
              ? h('img', { src: e.frame_url, alt: '', width: 64, height: 36, loading: 'lazy', decoding: 'async' })
              : h('span', { class: 'noimg' }),
            h(
              'span',
              { class: 'chip-body' },
              h('span', { class: 'mono' }, fmtSpan(e.start, e.end)),
              h('span', { class: 'chip-text' }, `${KINDS[e.kind] ?? e.kind} · ${e.text.replace(/\s+/g, ' ')}`),
              (!video || e.video_id !== video.file_id) && h('span', { class: 'chip-file muted' }, e.file_name),
            ),
          ),
        ),
      );
    chips.replaceChildren(...make(evidence.slice(0, 8)));
    if (many) {
      const more = h(
        'li',
        null,
        h(
          'button',
          { type: 'button', class: 'link', onclick: () => (more.remove(), chips.append(...make(evidence.slice(8)))) },
          `Show all ${evidence.length}`,
        ),
      );
      chips.append(more);
    }
  };

  /** The final answer, its times as buttons when they are cited times. */
  const renderAnswer = (text: string, evidence: Json[]) => {
    const parts = [];
    let last = 0;
    for (const m of text.matchAll(/\b(?:(\d+):)?(\d{1,2}):(\d{2})(?:\.\d+)?\b/g)) {
      const t = Number(m[1] ?? 0) * 3600 + Number(m[2]) * 60 + Number(m[3]);
      const e = evidence.find((x) => Math.abs(x.start - t) < 1) ?? evidence.find((x) => Math.abs(x.end - t) < 1);
      if (!e) continue;
      parts.push(
        text.slice(last, m.index),
        h(
          'button',
          { type: 'button', class: 'time', onclick: () => cite({ ...e, start: t }), 'aria-label': `Play from ${m[0]}` },
          m[0],
        ),
      );
      last = m.index + m[0].length;
    }
    parts.push(text.slice(last));
    answer.replaceChildren(...parts);
  };

  const form = h(
    'form',
    {
      class: 'card ask',
      'aria-labelledby': id('h'),
      onsubmit: async (ev: SubmitEvent) => {
        ev.preventDefault();
        const q = prompt.value.trim();
        if (!q) return;
        ctrl?.abort();
        const mine = (ctrl = new AbortController());
        const scope = form.querySelector<HTMLInputElement>('input[name=scope]:checked')?.value ?? 'index';
        // /inquire's schema asks for the token in the body; it travels in the POST body, never in a URL.
        const body: Record<string, unknown> = { token: S.token, index: indexId, prompt: q };
        if (video && scope !== 'index') body.target_video = video.file_id;
        if (scope === 'moment' && player) body.target = (player.currentTime || 0).toFixed(1);
        answer.replaceChildren();
        chips.replaceChildren();
        model.textContent = '';
        errorBox.textContent = '';
        answer.setAttribute('aria-busy', 'true');
        answer.classList.add('streaming');
        submit.disabled = true;
        stop.hidden = false;
        let evidence = [];
        let text = '';
        try {
          let res = null;
          if (S.streaming) {
            try {
              res = await api('/inquire-stream', {
                method: 'POST',
                body,
                accept: 'text/event-stream',
                signal: mine.signal,
              });
            } catch (e: any) {
              if (e.status !== 404 || !/no such endpoint/.test(e.message)) throw e;
              S.streaming = false;
            }
          }
          if (!res) {
            const j = await getJson('/inquire', { method: 'POST', body, signal: mine.signal });
            evidence = j.evidence ?? [];
            renderChips(evidence);
            text = j.output;
            model.textContent = j.model ? `Answered by ${j.model}` : '';
          } else {
            for await (const e of events(res)) {
              if (e.type === 'evidence') renderChips((evidence = e.evidence ?? []));
              else if (e.type === 'token') {
                text += e.text;
                answer.textContent = text;
              } else if (e.type === 'reset') answer.textContent = text = '';
              else if (e.type === 'complete') {
                text = e.output;
                model.textContent = e.model ? `Answered by ${e.model}` : '';
              } else if (e.type === 'error') throw new Error(e.message);
            }
          }
          renderAnswer(text, evidence);
          if (!evidence.length) chips.replaceChildren();
        } catch (e: any) {
          if (e.name !== 'AbortError') errorBox.textContent = e.message;
          else if (text) renderAnswer(text, evidence);
        } finally {
          if (ctrl === mine) {
            ctrl = null;
            answer.setAttribute('aria-busy', 'false');
            answer.classList.remove('streaming');
            submit.disabled = false;
            stop.hidden = true;
          }
        }
      },
    },
    h('h2', { id: id('h') }, video ? 'Ask about this video' : 'Ask about this index'),
    h('label', { for: id('q') }, 'Question'),
    prompt,
    radios.length > 0 && h('fieldset', { class: 'scopes' }, h('legend', null, 'About'), radios),
    h('div', { class: 'row' }, submit, stop),
    errorBox,
    answer,
    model,
    chips,
  );
  // Enter asks, Shift+Enter makes a new line.
  prompt.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  return form;
}
