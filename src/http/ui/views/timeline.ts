// The timeline strip of a video.
import type { Json } from '../api';
import { fmtSpan, fmtTime, h, KINDS } from '../dom';
import type { PersonLane } from './people';

/** A video's findings as GET /videos/{id}/segments gives them, with the people's lanes added. */
export interface Findings {
  segments: Json[];
  frames: { t: number; url: string }[];
  people?: PersonLane[];
}

interface Lane {
  name: string;
  cls: string;
  group?: string;
  items: Json[];
}

/** The timeline strip: one lane per kind of finding (objects: one lane per label), a playhead, hover details. */
export function timeline(
  { segments, frames, people }: Findings,
  duration: number,
  player: HTMLVideoElement,
  seek: (t: number) => void,
  cleanup: (() => void)[],
) {
  if (!duration || !segments.length)
    return h(
      'p',
      { class: 'muted small' },
      segments.length ? 'The duration is unknown.' : 'Nothing has been found in this video yet.',
    );
  const of = (...kinds: string[]) => segments.filter((s) => kinds.includes(s.kind));
  const transcripts = of('transcript');
  const lanes: Lane[] = [
    { name: 'Shots', cls: 'shot', items: of('shot') },
    { name: 'Speech', cls: 'speech', items: transcripts.length ? transcripts : of('speech') },
    { name: 'On-screen text', cls: 'ocr', items: of('ocr') },
  ];
  // Objects: the labels seen longest get a lane each; the rest share one.
  const objects = of('object');
  const seen = new Map<string, number>();
  for (const o of objects) seen.set(o.text, (seen.get(o.text) ?? 0) + (o.end - o.start));
  const labels = [...seen.entries()].sort((a, b) => b[1] - a[1]).map(([l]) => l);
  const top = labels.slice(0, 6);
  for (const l of top)
    lanes.push({ name: l, cls: 'object', group: 'Objects', items: objects.filter((o) => o.text === l) });
  if (labels.length > top.length)
    lanes.push({
      name: 'other objects',
      cls: 'object',
      group: 'Objects',
      items: objects.filter((o) => !top.includes(o.text)),
    });
  if (!objects.length) lanes.push({ name: 'Objects', cls: 'object', items: [] });
  const captions = of('caption');
  if (captions.length) lanes.push({ name: 'Captions', cls: 'other', items: captions });
  const other = of('audio');
  if (other.length) lanes.push({ name: 'Other', cls: 'other', items: other });
  // People (faces grouped across the index): one lane each, given by viewVideo.
  for (const p of people ?? []) lanes.push({ name: p.name, cls: 'face', group: 'People', items: p.items });

  const pct = (t: number) => `${Math.min(100, Math.max(0, (t / duration) * 100))}%`;
  const frameNear = (t: number) =>
    frames.reduce<Findings['frames'][number] | null>(
      (best, f) => (!best || Math.abs(f.t - t) < Math.abs(best.t - t) ? f : best),
      null,
    );
  const tip = h('div', { class: 'tip', role: 'tooltip', id: 'tl-tip', hidden: true });
  const box = h('div', { class: 'timeline' });

  const showTip = (seg: Json, el: HTMLElement) => {
    const f = frameNear(seg.kind === 'shot' ? Math.min(seg.start + 0.5, seg.end) : (seg.start + seg.end) / 2);
    tip.replaceChildren(
      f ? h('img', { src: f.url, alt: '', width: 160, height: 90, decoding: 'async' }) : '',
      h(
        'div',
        null,
        h('strong', null, KINDS[seg.kind] ?? seg.kind),
        ' ',
        h('span', { class: 'mono' }, fmtSpan(seg.start, seg.end)),
      ),
      h('div', { class: 'tip-text' }, seg.text),
      // Without a confidence the tip has always ended in the text "false" (the bare `false` of
      // `confidence != null && …`); kept so that the page does not change.
      seg.confidence != null
        ? h('div', { class: 'muted small' }, `confidence ${Math.round(seg.confidence * 100)} %`)
        : String(false),
    );
    tip.hidden = false;
    const b = box.getBoundingClientRect();
    const e = el.getBoundingClientRect();
    const w = tip.offsetWidth;
    const left = Math.min(Math.max(0, e.left - b.left + e.width / 2 - w / 2), Math.max(0, b.width - w));
    tip.style.left = `${left}px`;
    tip.style.top = `${e.bottom - b.top + 6}px`;
  };
  const hideTip = () => (tip.hidden = true);

  const rows = lanes.map((lane, li) => {
    const track = h('div', {
      class: 'track',
      role: 'group',
      'aria-label': `${lane.group ? `${lane.group}: ` : ''}${lane.name}`,
    });
    lane.items.forEach((seg, i) => {
      const b = h('button', {
        type: 'button',
        class: `seg ${lane.cls}${lane.cls === 'shot' && i % 2 ? ' alt' : ''}`,
        tabIndex: i === 0 ? 0 : -1,
        'aria-label': `${KINDS[seg.kind] ?? seg.kind} ${fmtSpan(seg.start, seg.end)}: ${seg.text.replace(/\s+/g, ' ')}`,
        'aria-describedby': 'tl-tip',
        style: { left: pct(seg.start), width: `max(6px, ${pct(seg.end - seg.start)})` },
        onclick: () => seek(seg.start),
        onmouseenter: (e: MouseEvent) => showTip(seg, e.currentTarget as HTMLElement),
        onmouseleave: hideTip,
        onfocus: (e: FocusEvent) => showTip(seg, e.currentTarget as HTMLElement),
        onblur: hideTip,
        onkeydown: (e: KeyboardEvent) => {
          const self = e.currentTarget as HTMLElement;
          if (e.key === 'Escape') return hideTip();
          const all = [...track.querySelectorAll<HTMLElement>('.seg')];
          const k = all.indexOf(self);
          const moves: Record<string, number> = { ArrowRight: k + 1, ArrowLeft: k - 1, Home: 0, End: all.length - 1 };
          const next = moves[e.key];
          const target = next === undefined ? undefined : all[next];
          if (!target) return;
          e.preventDefault();
          self.tabIndex = -1;
          target.tabIndex = 0;
          target.focus();
        },
      });
      track.append(b);
    });
    track.addEventListener('click', (e) => {
      if (e.target !== track) return;
      const rect = track.getBoundingClientRect();
      seek(((e.clientX - rect.left) / rect.width) * duration);
    });
    return h(
      'div',
      { class: `lane${lane.group && li > 0 && lanes[li - 1]!.group === lane.group ? ' same-group' : ''}` },
      h(
        'div',
        { class: 'lane-name', title: lane.name },
        lane.group && lane.group !== lanes[li - 1]?.group ? h('span', { class: 'muted' }, `${lane.group} · `) : '',
        lane.name,
      ),
      track,
    );
  });

  // The axis: round times, as many as fit the track's width.
  const axis = h('div', { class: 'track' });
  const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200];
  const drawTicks = () => {
    const fit = Math.max(2, Math.floor((axis.clientWidth || 600) / 52));
    const step = steps.find((s) => duration / s <= fit) ?? 14400;
    const ticks: HTMLSpanElement[] = [];
    for (let t = 0; t <= duration + 1e-6; t += step)
      ticks.push(
        h('span', { class: `tick${t / duration > 0.94 ? ' last' : ''}`, style: { left: pct(t) } }, fmtTime(t)),
      );
    axis.replaceChildren(...ticks);
  };
  const resized = new ResizeObserver(drawTicks);
  resized.observe(axis);
  const playhead = h('div', { class: 'playhead' });
  const move = () => (playhead.style.left = pct(player.currentTime || 0));
  for (const ev of ['timeupdate', 'seeked', 'loadedmetadata']) player.addEventListener(ev, move);
  cleanup.push(() => {
    resized.disconnect();
    for (const ev of ['timeupdate', 'seeked', 'loadedmetadata']) player.removeEventListener(ev, move);
  });
  box.append(
    ...rows,
    h('div', { class: 'lane axis', 'aria-hidden': 'true' }, h('div', { class: 'lane-name' }), axis),
    h('div', { class: 'heads', 'aria-hidden': 'true' }, playhead),
    tip,
  );
  move();
  return h(
    'div',
    null,
    box,
    h(
      'p',
      { class: 'muted small hint' },
      'Hover or focus a mark for details; click it (or press Enter) to play from there. Arrow keys move along a lane.',
    ),
  );
}
