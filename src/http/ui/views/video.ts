// The view of a video: player, timeline, downloads and questions.
import { ApiError, api, getJson, type Json } from '../api';
import { announce, focusHeading, fmtTime, h, stageLabel, toast } from '../dom';
import { S } from '../state';
import { askPanel } from './ask';
import { findIndex } from './index-page';
import { playLiveClip } from './live';
import { personLanes } from './people';
import { timeline } from './timeline';

export async function viewVideo(main: HTMLElement, indexId: string, fileId: string, params: URLSearchParams) {
  const [idx, rs]: [Json, Json[]] = await Promise.all([
    findIndex(indexId),
    getJson(`/index-resources?index=${encodeURIComponent(indexId)}`),
  ]);
  const r = rs.find((x) => x.file_id === fileId);
  if (!r) throw new ApiError(404, 'There is no such video in this index.');
  document.title = `${r.file_name} · vidq`;

  const player = h('video', {
    id: 'player',
    controls: true,
    preload: 'metadata',
    playsInline: true,
    // While its playable copy is being made there is nothing this browser is sure to play: wait for it.
    // A live stream has no single file: its moments play as clips (see seek).
    ...(!r.live && !copyPending(r) && { src: r.playback_src ?? r.src }),
    'aria-label': `Video ${r.file_name}`,
  });
  const start = Number(params.get('t'));
  if (!r.live && Number.isFinite(start) && start > 0)
    player.addEventListener('loadedmetadata', () => (player.currentTime = start), { once: true });
  let liveClipUrl: string | null = null;
  const seek = (t: number) => {
    announce(`Playing from ${fmtTime(t)}`);
    if (!r.live) {
      player.currentTime = t;
      return;
    }
    playLiveClip(player, fileId, t)
      .then(({ url }) => {
        if (liveClipUrl) URL.revokeObjectURL(liveClipUrl);
        liveClipUrl = url;
        status.textContent = `A clip of the live stream from ${fmtTime(t)}.`;
      })
      .catch((e) => (status.textContent = `The clip cannot be played: ${e.message}`));
  };
  const status = h('p', { class: 'status small', role: 'status' });
  const downloads = h('div', {}, exportLinks(r));
  let transcriptShown = transcriptSegments(r);
  // Reanalyze (issue 11): runs again the stages whose engine or model changed since the video was analysed.
  const reanalyze = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      hidden: true,
      title:
        'Run again the analysis stages whose model changed or that were skipped (e.g. captions after a captioner was configured)',
    },
    'Bring analysis up to date',
  );
  reanalyze.onclick = async () => {
    reanalyze.disabled = true;
    try {
      const res = await (
        await api(`/videos/${encodeURIComponent(fileId)}/reanalyze`, { method: 'POST', body: {} })
      ).json();
      toast(`Reanalysing: ${res.analyzers.join(', ')}.`);
      clearTimeout(timer);
      await load();
    } catch (e: any) {
      toast(e.message);
    } finally {
      reanalyze.disabled = false;
    }
  };
  const strip = h('div', { class: 'timeline-box' }, h('p', { class: 'muted small' }, 'Loading the timeline…'));
  const ask = askPanel({ indexId, video: r, player, seek });
  main.replaceChildren(
    h(
      'nav',
      { class: 'crumbs', 'aria-label': 'Breadcrumb' },
      h('a', { href: '#/' }, 'Indexes'),
      ' › ',
      h('a', { href: `#/i/${encodeURIComponent(indexId)}` }, idx.name),
      ' › ',
      h('span', { 'aria-current': 'page' }, r.file_name),
    ),
    h('h1', { tabindex: -1 }, r.file_name),
    h(
      'div',
      { class: 'split video-page' },
      h(
        'div',
        { class: 'col' },
        h('div', { class: 'player' }, player),
        status,
        reanalyze,
        downloads,
        h('section', { 'aria-labelledby': 'tl-h', class: 'card' }, h('h2', { id: 'tl-h' }, 'Timeline'), strip),
      ),
      h('aside', { class: 'col side' }, ask),
    ),
  );
  focusHeading(main);

  let timer = 0;
  let stopped = false;
  S.cleanup.push(() => {
    stopped = true;
    clearTimeout(timer);
    player.pause();
    player.removeAttribute('src');
    player.load();
    if (liveClipUrl) URL.revokeObjectURL(liveClipUrl);
  });
  if (r.live && Number.isFinite(start) && start >= 0 && params.has('t')) seek(start);
  let shown = -1;
  const dropTimeline: (() => void)[] = [];
  S.cleanup.push(() => dropTimeline.splice(0).forEach((f) => f()));
  const load = async () => {
    const [segs, list]: [Json, Json[]] = await Promise.all([
      getJson(`/videos/${encodeURIComponent(fileId)}/segments`),
      getJson(`/index-resources?index=${encodeURIComponent(indexId)}`),
    ]);
    if (stopped) return;
    const cur = list.find((x) => x.file_id === fileId) ?? r;
    const pending = copyPending(cur);
    const busy = (cur.status !== 'ready' && cur.status !== 'failed') || pending;
    status.textContent =
      cur.status === 'failed'
        ? `Analysis failed: ${cur.error ?? 'unknown reason'}`
        : cur.status !== 'ready'
          ? `${stageLabel(cur.stage || cur.status)} — ${Math.round(cur.progress ?? 0)} %. The timeline fills in as the analysis goes.`
          : pending
            ? 'A copy every browser can play is being made; the video appears here when it is done.'
            : '';
    // The playable copy may be announced after the page opened (the analysis had not started yet):
    // switch to it, keeping the position.
    const want: string | null = pending || cur.live ? null : (cur.playback_src ?? cur.src);
    if (want && new URL(want, location.href).pathname !== new URL(player.src || '/', location.href).pathname) {
      const at = player.currentTime;
      player.src = want;
      if (at > 0) player.addEventListener('loadedmetadata', () => (player.currentTime = at), { once: true });
    }
    if (transcriptSegments(cur) !== transcriptShown) {
      transcriptShown = transcriptSegments(cur);
      downloads.replaceChildren(exportLinks(cur));
    }
    status.classList.toggle('error', cur.status === 'failed');
    reanalyze.hidden = cur.status !== 'ready';
    if (segs.segments.length !== shown) {
      shown = segs.segments.length;
      const duration =
        cur.metadata?.duration || Math.max(0, ...segs.segments.map((s: Json) => s.end)) || player.duration || 0;
      dropTimeline.splice(0).forEach((f) => f());
      if (segs.segments.some((s: Json) => s.kind === 'face'))
        segs.people = await personLanes(indexId, fileId).catch(() => []);
      strip.replaceChildren(timeline(segs, duration, player, seek, dropTimeline));
      // A poster from the analysed frames (many videos open on black): one near the start.
      const f = segs.frames.find((x: Json) => x.t >= Math.min(5, duration * 0.1)) ?? segs.frames[0];
      if (f && !player.poster) player.poster = f.url;
    }
    if (busy) timer = setTimeout(() => load().catch(() => {}), 2000);
  };
  await load();
}

/** Download links of a video's analysis; fetched with the token (never put in a URL), saved as files. */
export function exportLinks(r: Json) {
  const save = (path: string, name: string) => async (e: Event) => {
    e.preventDefault();
    try {
      const res = await api(path);
      const a = h('a', { href: URL.createObjectURL(await res.blob()), download: name });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    } catch (err: any) {
      toast(err.message);
    }
  };
  const base = r.file_name.replace(/\.[A-Za-z0-9]{1,5}$/, '') || 'video';
  const id = encodeURIComponent(r.file_id);
  // Subtitles are made from the transcript: with none (no speech transcribed, no subtitle track)
  // there is nothing to export, so no link that could only answer an error.
  const subtitles =
    transcriptSegments(r) > 0
      ? [
          h('a', { href: '#', onclick: save(`/videos/${id}/transcript.vtt`, `${base}.vtt`) }, 'subtitles (WebVTT)'),
          ' · ',
          h('a', { href: '#', onclick: save(`/videos/${id}/transcript.srt`, `${base}.srt`) }, 'subtitles (SRT)'),
          ' · ',
        ]
      : [];
  return h(
    'p',
    { class: 'downloads small' },
    'Download: ',
    ...subtitles,
    h(
      'a',
      { href: '#', onclick: save(`/videos/${id}/insights.json`, `${base}.insights.json`) },
      'everything found (JSON)',
    ),
  );
}

/** The video's browser-playable copy is still being made (its `playback_src` answers 503 until then). */
function copyPending(r: Json): boolean {
  return r.metadata?.analysis?.playback?.state === 'making';
}

/** Transcript segments of a video (speech recognised plus subtitle cues), from its analysis summary. */
function transcriptSegments(r: Json): number {
  const a = r.metadata?.analysis ?? {};
  return (a.speech?.segments ?? 0) + (a.subtitles?.segments ?? 0);
}
