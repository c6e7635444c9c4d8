// Uploads: add a video by URL or from this computer, follow it until analysed; the uploads list.
import { ApiError, api, events, getJson, type Json } from '../api';
import { announce, fmtBytes, fmtEta, fmtTime, h, stageLabel, toast } from '../dom';
import { nextUploadId, S, type Upload } from '../state';

/** An index as GET /indexes lists it. */
type IndexRef = { index_id: string; name: string } | null;

export function addVideoForm(index: IndexRef) {
  const nameInput =
    !index &&
    h('input', {
      id: 'add-index',
      name: 'index',
      required: true,
      autocomplete: 'off',
      list: 'index-names',
      placeholder: 'e.g. holidays',
    });
  const urlInput = h('input', {
    id: 'add-url',
    name: 'url',
    type: 'url',
    required: true,
    placeholder: 'https://example.com/clip.mp4',
    autocomplete: 'off',
  });
  const datalist = h('datalist', { id: 'index-names' });
  const form = h(
    'form',
    {
      class: 'card add',
      'aria-labelledby': 'add-h',
      onsubmit: (e: SubmitEvent) => {
        e.preventDefault();
        const ref = index ? index.index_id : (nameInput as HTMLInputElement).value.trim();
        const url = urlInput.value.trim();
        if (!ref || !url) return;
        startUpload(ref, index ? index.name : ref, url);
        urlInput.value = '';
        urlInput.focus();
      },
    },
    h('h2', { id: 'add-h' }, index ? 'Add a video to this index' : 'Add a video'),
    h(
      'div',
      { class: 'fields' },
      nameInput &&
        h(
          'div',
          { class: 'field' },
          h('label', { for: 'add-index' }, 'Index'),
          nameInput,
          datalist,
          h('span', { class: 'muted small' }, 'A new name creates the index.'),
        ),
      h('div', { class: 'field grow' }, h('label', { for: 'add-url' }, 'Video URL'), urlInput),
      h('div', { class: 'field end' }, h('button', { type: 'submit' }, 'Add video')),
    ),
  );
  const setNames = (names: string[]) => {
    datalist.replaceChildren(...names.map((n) => h('option', { value: n })));
    if (nameInput && !nameInput.value && names[0]) nameInput.value = names[0];
  };
  return Object.assign(form, { setNames });
}

export async function startUpload(ref: string, label: string, url: string) {
  const u: Upload = {
    id: nextUploadId(),
    url,
    indexLabel: label,
    indexId: null,
    key: null,
    fileName: url.split(/[?#]/)[0]!.split('/').pop() || url,
    phase: 'upload',
    stage: 'connecting',
    pct: 0,
    samples: [],
    error: null,
  };
  S.uploads.unshift(u);
  renderUploads();
  announce(`Adding ${u.fileName}`);
  try {
    const res = await api('/remote-upload', { method: 'POST', body: { index: ref, url }, accept: 'text/event-stream' });
    if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
      const j = await res.json(); // a service without streaming: the JSON answer once stored
      Object.assign(u, { key: j.data.key, phase: 'analysis', stage: 'queued' });
    } else {
      for await (const e of events(res)) {
        switch (e.type) {
          case 'file_authorized':
            Object.assign(u, { key: e.key, indexId: e.index_id, fileName: e.file_name || u.fileName });
            S.onIndexesChanged?.(); // the index may be new, and the video is listed from now on
            break;
          case 'progress':
            if (e.stage !== u.stage) u.samples = [];
            Object.assign(u, { stage: e.stage, pct: e.percentage, bytes: e.bytes, total: e.total_bytes });
            sample(u);
            break;
          case 'complete':
            Object.assign(u, {
              key: e.key,
              indexId: e.index_id,
              phase: 'analysis',
              stage: e.status === 'ready' ? 'ready' : 'queued',
              pct: 0,
              samples: [],
              duplicate: e.duplicate,
            });
            S.onIndexesChanged?.();
            break;
          case 'error':
            Object.assign(u, { phase: 'done', stage: 'failed', error: e.message });
            break;
        }
        renderUploads();
      }
    }
    if (u.phase === 'upload')
      Object.assign(u, { phase: 'done', stage: 'failed', error: 'the upload stream ended before the file was stored' });
    if (u.phase === 'analysis') await followAnalysis(u, ref);
  } catch (e: any) {
    Object.assign(u, { phase: 'done', stage: 'failed', error: e.message });
  }
  renderUploads();
  announce(u.stage === 'ready' ? `${u.fileName} is ready` : `${u.fileName} failed: ${u.error}`);
  S.onIndexesChanged?.();
}

export function sample(u: Upload) {
  u.samples.push({ t: performance.now(), p: u.pct });
  if (u.samples.length > 60) u.samples.splice(1, 1);
}

/** Estimated seconds left from the progress so far in this stage (or the service's own estimate). */
export function etaOf(u: Upload) {
  if (u.eta != null) return u.eta;
  const s = u.samples;
  if (s.length < 2) return null;
  const a = s[0]!;
  const b = s[s.length - 1]!;
  const dp = b.p - a.p;
  if (dp < 2 || b.p >= 100 || b.t - a.t < 1500) return null;
  return ((b.t - a.t) / 1000) * ((100 - b.p) / dp);
}

/** Polls the resource until its analysis ends. */
export async function followAnalysis(u: Upload, ref: string) {
  const index = u.indexId ?? ref;
  for (;;) {
    if (u.stage === 'ready' || u.stage === 'failed') break;
    const list: Json[] = await getJson(`/index-resources?index=${encodeURIComponent(index)}`);
    const r = list.find((x) => x.file_id === u.key);
    if (!r) {
      Object.assign(u, { phase: 'done', stage: 'failed', error: 'the video was removed' });
      break;
    }
    const stage = r.status === 'ready' ? 'ready' : r.status === 'failed' ? 'failed' : r.stage || r.status;
    u.eta = r.eta_sec ?? r.eta ?? null;
    u.pct = r.progress ?? 0;
    u.stage = stage;
    u.error = r.error ?? null;
    u.duration = r.metadata?.duration;
    sample(u);
    renderUploads();
    if (r.status === 'ready' || r.status === 'failed') break;
    await new Promise((ok) => setTimeout(ok, 1000));
  }
  u.phase = 'done';
}

/** Keeps the upload list(s) on the page in step with S.uploads, updating rows in place. */
export function renderUploads() {
  for (const box of document.querySelectorAll<HTMLElement>('[data-uploads]')) {
    const filter = box.dataset.uploads;
    const list = S.uploads.filter(
      (u) => !filter || u.indexId === filter || (!u.indexId && u.indexLabel === box.dataset.name),
    );
    box.closest('section')!.hidden = list.length === 0;
    box.replaceChildren(...list.map(uploadRow));
  }
}

export function uploadRow(u: Upload) {
  const failed = u.stage === 'failed';
  const ready = u.stage === 'ready';
  const pct = Math.round(u.pct ?? 0);
  let line;
  if (failed) line = `Failed: ${u.error ?? 'unknown reason'}`;
  else if (ready)
    line = u.duplicate
      ? 'Ready (this file was already in the index)'
      : `Ready${u.duration ? ` · ${fmtTime(u.duration)}` : ''}`;
  else {
    const bits = [`${stageLabel(u.stage)} — ${pct} %`];
    if ((u.stage === 'downloading' || u.stage === 'uploading') && u.bytes)
      bits.push(u.total ? `${fmtBytes(u.bytes)} of ${fmtBytes(u.total)}` : fmtBytes(u.bytes));
    const eta = fmtEta(etaOf(u));
    if (eta) bits.push(eta);
    line = bits.join(' · ');
  }
  return h(
    'li',
    { class: `upload ${failed ? 'failed' : ready ? 'ready' : 'busy'}` },
    h(
      'div',
      { class: 'upload-head' },
      h('strong', { class: 'name' }, u.fileName),
      h('span', { class: 'muted small' }, ` into ${u.indexLabel}`),
    ),
    !failed && !ready && h('progress', { max: 100, value: pct, 'aria-label': `${u.fileName}: ${stageLabel(u.stage)}` }),
    h('p', { class: `status${failed ? ' error' : ''}`, role: failed ? 'alert' : null }, line),
    h(
      'div',
      { class: 'actions' },
      ready &&
        u.indexId &&
        h(
          'a',
          { class: 'button', href: `#/v/${encodeURIComponent(u.indexId)}/${encodeURIComponent(String(u.key))}` },
          'Open video',
        ),
      (ready || failed) &&
        h(
          'button',
          {
            type: 'button',
            class: 'link',
            'aria-label': `Dismiss ${u.fileName}`,
            onclick: () => {
              S.uploads = S.uploads.filter((x) => x !== u);
              renderUploads();
            },
          },
          'Dismiss',
        ),
    ),
  );
}

export function uploadsSection(index: IndexRef) {
  const box = h('ul', { class: 'uploads', 'data-uploads': index?.index_id ?? '', 'data-name': index?.name ?? '' });
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'up-h', hidden: true },
    h('h2', { id: 'up-h' }, 'Uploads'),
    box,
  );
}

/**
 * Drop (or pick) files to upload into the index; several at once, each with its own row in the
 * uploads list: bytes sent (XMLHttpRequest reports upload progress, fetch does not), then the
 * analysis stage and estimate like URL uploads. `refOf` gives the index to upload into (home: the
 * name typed in the form above).
 */
export function dropZone(refOf: () => { ref: string; label: string } | null) {
  const input = h('input', {
    type: 'file',
    id: 'drop-files',
    multiple: true,
    accept: 'video/*,.mkv,.webm,.mov,.avi,.ts,.m4v',
    class: 'sr-only',
    onchange: (e: Event) => take((e.target as HTMLInputElement).files!),
  });
  const take = (files: FileList) => {
    const ref = refOf();
    if (!ref) {
      toast('Name an index first (above), then drop the files again.');
      return;
    }
    for (const f of files) startFileUpload(ref.ref, ref.label, f);
    input.value = '';
  };
  const zone = h(
    'section',
    { class: 'card drop', 'aria-labelledby': 'drop-h' },
    h('h2', { id: 'drop-h' }, 'Upload from this computer'),
    h(
      'p',
      { class: 'muted small' },
      'Drop video files here, several at once, or ',
      h('label', { for: 'drop-files', class: 'link' }, 'choose files'),
      '.',
    ),
    input,
  );
  const over = (on: boolean) => (e: DragEvent) => {
    e.preventDefault();
    zone.classList.toggle('over', on);
  };
  zone.addEventListener('dragover', over(true));
  zone.addEventListener('dragenter', over(true));
  zone.addEventListener('dragleave', over(false));
  zone.addEventListener('drop', (e) => {
    over(false)(e);
    if (e.dataTransfer?.files?.length) take(e.dataTransfer.files);
  });
  return zone;
}

export async function startFileUpload(ref: string, label: string, file: File) {
  const u: Upload = {
    id: nextUploadId(),
    url: null,
    indexLabel: label,
    indexId: null,
    key: null,
    fileName: file.name,
    phase: 'upload',
    stage: 'uploading',
    pct: 0,
    samples: [],
    error: null,
    bytes: 0,
    total: file.size,
  };
  S.uploads.unshift(u);
  renderUploads();
  announce(`Uploading ${u.fileName}`);
  try {
    const j = await new Promise<Json>((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open('POST', `/upload?index=${encodeURIComponent(ref)}&file_name=${encodeURIComponent(file.name)}`);
      xhr.setRequestHeader('authorization', `Bearer ${S.token}`);
      xhr.setRequestHeader('content-type', file.type || 'application/octet-stream');
      xhr.responseType = 'json';
      xhr.upload.onprogress = (e) => {
        Object.assign(u, {
          bytes: e.loaded,
          total: e.lengthComputable ? e.total : file.size,
          pct: Math.min(99, (e.loaded / (e.total || file.size || 1)) * 100),
        });
        sample(u);
        renderUploads();
      };
      xhr.upload.onload = () => {
        Object.assign(u, { stage: 'probing', pct: 100, samples: [] });
        renderUploads();
      };
      xhr.onload = () =>
        xhr.status === 200
          ? resolve(xhr.response)
          : reject(new ApiError(xhr.status, xhr.response?.message ?? `${xhr.status} ${xhr.statusText}`));
      xhr.onerror = () => reject(new ApiError(0, 'the upload was cut off (the service cannot be reached)'));
      xhr.send(file);
    });
    Object.assign(u, { key: j.data.key, phase: 'analysis', stage: 'queued', pct: 0, samples: [] });
    S.onIndexesChanged?.();
    const rs: Json[] = await getJson(`/index-resources?index=${encodeURIComponent(ref)}`);
    const r = rs.find((x) => x.file_id === u.key);
    u.indexId =
      ((await getJson('/indexes')) as Json[]).find((i) => i.name === ref || i.index_id === ref)?.index_id ?? null;
    if (r?.status === 'ready') u.stage = 'ready';
    renderUploads();
    await followAnalysis(u, ref);
  } catch (e: any) {
    if (e.status === 401) return;
    Object.assign(u, { phase: 'done', stage: 'failed', error: e.message });
  }
  renderUploads();
  announce(u.stage === 'ready' ? `${u.fileName} is ready` : `${u.fileName} failed: ${u.error}`);
  S.onIndexesChanged?.();
}
