// The live streams of an index page: a tile per stream with its latest frame, its state, a rolling
// timeline of its recent segments and its alerts as they fire; a moment clicked plays its clip.
import { api, events, getJson, type Json } from '../api';
import { announce, fmtSpan, fmtTime, h, KINDS, toast } from '../dom';
import { S } from '../state';

/** Seconds of stream time the rolling timeline shows. */
const WINDOW_SEC = 120;
/** How often the tiles refresh. */
const POLL_MS = 2000;
/** How much before a clicked moment its clip starts, and how long it is. */
const LEAD_SEC = 3;
const CLIP_SEC = 30;

const STATES: Record<string, string> = {
  connecting: 'Connecting',
  live: 'Live',
  reconnecting: 'Reconnecting',
  paused: 'Paused',
  stopped: 'Stopped',
  failed: 'Failed',
  ended: 'Ended',
};

interface Tile {
  el: HTMLLIElement;
  update(r: Json): void;
  refresh(live: Json): Promise<void>;
  alert(a: Json): void;
}

/**
 * The live tiles of one index page. `tile` gives the same element for the same stream across the
 * page's reloads of its list, so a playing clip and the alerts shown stay.
 */
export function liveBoard(idx: Json) {
  const tiles = new Map<string, Tile>();
  let started = false;
  let stopped = false;
  let timer = 0;
  const ctrl = new AbortController();
  S.cleanup.push(() => ((stopped = true), clearTimeout(timer), ctrl.abort()));

  const poll = async () => {
    try {
      const streams: Json[] = await getJson(`/streams?index=${encodeURIComponent(idx.index_id)}`, {
        signal: ctrl.signal,
      });
      await Promise.all(
        streams.map((st) => {
          const tile = tiles.get(st.file_id);
          return tile?.el.isConnected ? tile.refresh(st).catch(() => {}) : undefined;
        }),
      );
    } catch {
      /* the next round tries again */
    }
    if (!stopped) timer = window.setTimeout(poll, POLL_MS);
  };
  const listen = async () => {
    // Alerts that fired already (newest first), then the new ones as server-sent events.
    try {
      const fired: Json[] = await getJson('/alerts/fired', { signal: ctrl.signal });
      for (const a of fired.slice().reverse()) tiles.get(a.file_id)?.alert(a);
    } catch {
      /* shown as they fire */
    }
    for (let wait = 1000; !stopped; wait = Math.min(30_000, wait * 2)) {
      try {
        const res = await api('/alerts/events', { accept: 'text/event-stream', signal: ctrl.signal });
        for await (const a of events(res)) {
          wait = 1000;
          const tile = tiles.get(a.file_id);
          if (tile) {
            tile.alert(a);
            announce(`Alert on ${a.query}: ${a.evidence}`);
          }
        }
      } catch (e: any) {
        if (e.name === 'AbortError') return;
      }
      await new Promise((r) => setTimeout(r, wait));
    }
  };

  return {
    tile(r: Json, extras: Node[]): HTMLLIElement {
      let tile = tiles.get(r.file_id);
      if (!tile) {
        tile = liveTile(idx, r, extras);
        tiles.set(r.file_id, tile);
      } else tile.update(r);
      if (!started) {
        started = true;
        void poll();
        void listen();
      }
      return tile.el;
    },
  };
}

/**
 * Loads the clip of a live stream around stream second `t` into `player` (fetched with the token in a
 * header, never in a URL) and plays it from `t`. Returns where the clip starts and its object URL
 * (the caller revokes it when it is replaced).
 */
export async function playLiveClip(
  player: HTMLVideoElement,
  fileId: string,
  t: number,
): Promise<{ from: number; url: string }> {
  const start = Math.max(0, t - LEAD_SEC);
  const res = await api(
    `/media/${encodeURIComponent(fileId)}/live-clip?start=${start.toFixed(2)}&end=${(start + CLIP_SEC).toFixed(2)}`,
  );
  const from = Number(res.headers.get('x-clip-start') ?? start);
  const url = URL.createObjectURL(await res.blob());
  player.src = url;
  player.addEventListener('loadedmetadata', () => (player.currentTime = Math.max(0, t - from)), { once: true });
  void player.play().catch(() => {});
  return { from, url };
}

function liveTile(idx: Json, r: Json, extras: Node[]): Tile {
  const fileId: string = r.file_id;
  let live: Json = r.live;
  let shownLatest: number | null = null;
  const alerts: Json[] = [];

  const badge = h('span', { class: 'badge' });
  const reason = h('p', { class: 'small live-reason', hidden: true });
  const counts = h('span', { class: 'muted small' });
  const img = h('img', { class: 'live-frame', alt: `Latest frame of ${live.name}`, decoding: 'async', hidden: true });
  const noFrame = h('div', { class: 'live-frame empty muted small' }, 'No frame yet');
  const frameNote = h('div', { class: 'muted small live-frame-note' });
  const lanes = h('div', { class: 'timeline live-timeline', role: 'group', 'aria-label': 'Recent moments' });
  const alertList = h('ul', { class: 'live-alerts', 'aria-label': 'Alerts' });
  const noAlerts = h('p', { class: 'muted small' }, 'No alert has fired.');
  const player = h('video', { controls: true, muted: true, playsInline: true, preload: 'auto' });
  const clipNote = h('span', { class: 'small' });
  const clipError = h('p', { class: 'error small', role: 'alert' });
  const clipBox = h(
    'div',
    { class: 'live-clip', hidden: true },
    player,
    h(
      'div',
      { class: 'live-clip-bar' },
      clipNote,
      h('button', { type: 'button', class: 'link', onclick: () => closeClip() }, 'Close'),
    ),
  );
  const pauseBtn = h('button', { type: 'button', class: 'link', onclick: () => control() });
  let clipUrl: string | null = null;

  const closeClip = () => {
    player.pause();
    player.removeAttribute('src');
    player.load();
    if (clipUrl) URL.revokeObjectURL(clipUrl);
    clipUrl = null;
    clipBox.hidden = true;
  };
  S.cleanup.push(() => clipUrl && URL.revokeObjectURL(clipUrl));

  /** Plays the clip around stream second `t` in the tile. */
  const play = async (t: number, label: string) => {
    clipError.textContent = '';
    clipNote.textContent = `Loading the clip at ${fmtTime(t)}…`;
    clipBox.hidden = false;
    try {
      const { from, url } = await playLiveClip(player, fileId, t);
      if (clipUrl) URL.revokeObjectURL(clipUrl);
      clipUrl = url;
      clipNote.textContent = `${label} — stream time ${fmtTime(t)} (the clip starts at ${fmtTime(from)})`;
    } catch (e: any) {
      clipNote.textContent = '';
      clipError.textContent = `The clip cannot be played: ${e.message}`;
    }
  };

  const control = async () => {
    const action = live.status === 'paused' || live.status === 'failed' ? 'resume' : 'pause';
    try {
      const res = await api(`/streams/${encodeURIComponent(live.stream_id)}/${action}`, { method: 'POST' });
      live = await res.json();
      drawState();
      toast(action === 'pause' ? `Paused ${live.name}.` : `Resumed ${live.name}.`);
    } catch (e: any) {
      toast(e.message);
    }
  };

  const drawState = () => {
    const st: string = live.status;
    badge.className = `badge live-${st}`;
    badge.textContent = STATES[st] ?? st;
    reason.hidden = !live.reason;
    reason.className = `small live-reason${st === 'failed' ? ' error' : ''}`;
    reason.textContent = live.reason ? `${STATES[st] ?? st}: ${live.reason}` : '';
    counts.textContent = [
      live.source === 'push' ? 'pushed frames' : live.source,
      `${live.frames_analysed} frames analysed`,
      live.frames_dropped ? `${live.frames_dropped} dropped` : '',
      live.went_live_at ? `live since ${new Date(live.went_live_at).toLocaleTimeString()}` : '',
    ]
      .filter(Boolean)
      .join(' · ');
    pauseBtn.hidden = st === 'stopped' || st === 'ended';
    pauseBtn.textContent = st === 'paused' || st === 'failed' ? 'Resume' : 'Pause';
    pauseBtn.setAttribute('aria-label', `${pauseBtn.textContent} ${live.name}`);
  };

  const drawTimeline = (segments: Json[], now: number) => {
    const from = Math.max(0, now - WINDOW_SEC);
    const to = Math.max(from + 30, now);
    const pct = (t: number) => `${Math.min(100, Math.max(0, ((t - from) / (to - from)) * 100))}%`;
    const byLane = new Map<string, { cls: string; items: Json[] }>();
    for (const g of segments) {
      if (g.kind === 'shot' || g.end < from) continue;
      const name = g.kind === 'object' ? g.text : (KINDS[g.kind] ?? g.kind);
      const cls = g.kind === 'object' ? 'object' : g.kind === 'ocr' ? 'ocr' : g.kind === 'caption' ? 'other' : 'speech';
      if (!byLane.has(name)) byLane.set(name, { cls, items: [] });
      byLane.get(name)!.items.push(g);
    }
    const recent = alerts.filter((a) => a.time >= from);
    const lane = (name: string, track: HTMLElement) =>
      h('div', { class: 'lane' }, h('div', { class: 'lane-name', title: name }, name), track);
    const rows = [...byLane.entries()].slice(0, 6).map(([name, { cls, items }]) => {
      const track = h('div', { class: 'track', role: 'group', 'aria-label': name });
      for (const g of items) {
        const label = `${KINDS[g.kind] ?? g.kind} ${fmtSpan(g.start, g.end)}: ${String(g.text).replace(/\s+/g, ' ')}`;
        track.append(
          h('button', {
            type: 'button',
            class: `seg ${cls}`,
            title: label,
            'aria-label': `Play ${label}`,
            style: { left: pct(g.start), width: `max(6px, calc(${pct(g.end)} - ${pct(g.start)}))` },
            onclick: () => play(Math.max(g.start, from), `${KINDS[g.kind] ?? g.kind}: ${g.text}`),
          }),
        );
      }
      return lane(name, track);
    });
    if (recent.length) {
      const track = h('div', { class: 'track', role: 'group', 'aria-label': 'Alerts' });
      for (const a of recent)
        track.append(
          h('button', {
            type: 'button',
            class: 'seg alert-mark',
            title: `${a.query} at ${fmtTime(a.time)}`,
            'aria-label': `Play the alert ${a.query} at ${fmtTime(a.time)}`,
            style: { left: pct(a.time) },
            onclick: () => play(a.time, `Alert: ${a.query}`),
          }),
        );
      rows.push(lane('Alerts', track));
    }
    lanes.replaceChildren(
      ...(rows.length ? rows : [h('p', { class: 'muted small' }, 'Nothing found in the last two minutes.')]),
      h(
        'div',
        { class: 'lane axis', 'aria-hidden': 'true' },
        h('div', { class: 'lane-name' }),
        h(
          'div',
          { class: 'track' },
          h('span', { class: 'tick', style: { left: '0%' } }, fmtTime(from)),
          h('span', { class: 'tick last', style: { left: '100%' } }, fmtTime(to)),
        ),
      ),
    );
  };

  const drawAlerts = () => {
    alertList.replaceChildren(
      ...alerts
        .slice(-5)
        .reverse()
        .map((a) =>
          h(
            'li',
            null,
            h(
              'button',
              {
                type: 'button',
                class: 'live-alert',
                onclick: () => play(a.time, `Alert: ${a.query}`),
                'aria-label': `Play the alert ${a.query} at ${fmtTime(a.time)}: ${a.evidence}`,
              },
              a.frame_url ? h('img', { src: a.frame_url, alt: '', width: 64, height: 36, decoding: 'async' }) : '',
              h(
                'span',
                null,
                h('strong', null, a.query),
                ' ',
                h('span', { class: 'mono small' }, fmtTime(a.time)),
                h('span', { class: 'muted small live-evidence' }, a.evidence),
              ),
            ),
          ),
        ),
    );
    noAlerts.hidden = alerts.length > 0;
  };

  const el = h(
    'li',
    { class: 'video live-tile', 'data-file-id': fileId },
    h(
      'div',
      { class: 'live-head' },
      h(
        'div',
        { class: 'grow' },
        h(
          'a',
          { class: 'name', href: `#/v/${encodeURIComponent(idx.index_id)}/${encodeURIComponent(fileId)}` },
          live.name,
        ),
        badge,
      ),
      counts,
      pauseBtn,
      ...extras,
    ),
    reason,
    h(
      'div',
      { class: 'live-body' },
      h('figure', { class: 'live-latest' }, img, noFrame, frameNote),
      h('div', { class: 'live-side' }, h('h3', null, 'Alerts'), noAlerts, alertList),
    ),
    lanes,
    clipError,
    clipBox,
  );

  drawState();
  drawAlerts();
  return {
    el,
    update(next: Json) {
      if (next.live) (live = next.live), drawState();
    },
    async refresh(next: Json) {
      live = next;
      drawState();
      const now: number | undefined = live.latest_time;
      if (now === undefined || now === shownLatest) return;
      const found = await getJson(
        `/videos/${encodeURIComponent(fileId)}/segments?from=${Math.max(0, now - WINDOW_SEC).toFixed(3)}`,
      );
      shownLatest = now;
      const frame = found.frames[found.frames.length - 1];
      if (frame) {
        // The new frame replaces the old one once it is loaded (no blank between them).
        const next = new Image();
        next.src = frame.url;
        await next.decode().catch(() => {});
        img.src = frame.url;
        img.hidden = false;
        noFrame.hidden = true;
        frameNote.textContent = `Stream time ${fmtTime(frame.t)}`;
      }
      drawTimeline(found.segments, now);
    },
    alert(a: Json) {
      if (alerts.some((x) => x.event_id === a.event_id)) return;
      alerts.push(a);
      alerts.sort((x, y) => x.time - y.time);
      drawAlerts();
      el.classList.remove('alerted');
      void el.offsetWidth;
      el.classList.add('alerted');
    },
  };
}
