// vidq's web page: a hand-written ES module, no dependencies, served from the executable by
// src/http/routes/ui.ts. It talks to the same HTTP API as any client, with the token in an
// `Authorization: Bearer` header (kept in sessionStorage, never in a URL); the `src` and
// `frame_url` links the API returns are signed, so <video> and <img> can load them directly.
//
// Views (hash routes): sign-in; #/ indexes; #/i/<index_id> an index; #/v/<index_id>/<file_id>[?t=s]
// a video with its player, timeline and questions.

const TOKEN_KEY = 'vidq.token';
const S = {
  token: sessionStorage.getItem(TOKEN_KEY),
  showDeleted: false,
  /** Uploads started in this tab (newest first), followed until their analysis ends. */
  uploads: [],
  /** Run when the view changes: stop polls, abort streams. */
  cleanup: [],
  /** false once /inquire-stream answered "no such endpoint". */
  streaming: true,
};
let uploadSeq = 0;

// ---------- small helpers

/** Creates an element. Props: `on*` listeners, `class`, `style` (object), DOM properties or attributes. */
function h(tag, props, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props ?? {})) {
    if (v == null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'style') Object.assign(el.style, v);
    else if (typeof v !== 'string' && k in el) el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const kid of kids.flat(Infinity))
    if (kid != null && kid !== false) el.append(kid instanceof Node ? kid : String(kid));
  return el;
}

/** 75.4 → "1:15"; with `tenths`, "1:15.4". */
function fmtTime(sec, tenths = false) {
  if (!Number.isFinite(sec)) return '–';
  const s = Math.max(0, sec);
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = tenths ? (s % 60).toFixed(1).padStart(4, '0') : String(Math.floor(s % 60)).padStart(2, '0');
  return hh ? `${hh}:${String(mm).padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}
const fmtSpan = (a, b) => (Math.abs(b - a) < 0.5 ? fmtTime(a) : `${fmtTime(a)}–${fmtTime(b)}`);
function fmtBytes(n) {
  if (!Number.isFinite(n)) return '';
  const u = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < u.length - 1) (n /= 1000), i++;
  return `${n < 10 && i ? n.toFixed(1) : Math.round(n)} ${u[i]}`;
}
function fmtEta(sec) {
  if (sec == null || !Number.isFinite(sec)) return '';
  return sec < 60 ? `about ${Math.max(1, Math.round(sec))} s left` : `about ${Math.round(sec / 60)} min left`;
}
const plural = (n, one, many = one + 's') => `${n} ${n === 1 ? one : many}`;

const STAGES = {
  connecting: 'Connecting',
  downloading: 'Downloading',
  uploading: 'Uploading',
  probing: 'Checking the file',
  stored: 'Stored',
  queued: 'Waiting for analysis',
  'analyzing:visual': 'Analysing: shots and frames',
  'analyzing:ocr': 'Analysing: on-screen text',
  'analyzing:objects': 'Analysing: objects',
  'analyzing:speech': 'Analysing: speech',
  'analyzing:subtitles': 'Analysing: subtitles',
  'analyzing:embeddings': 'Analysing: indexing for search',
  finalizing: 'Finishing',
  ready: 'Ready',
  failed: 'Failed',
};
const stageLabel = (s) => STAGES[s] ?? (s ? s.replace(/^analyzing:/, 'Analysing: ') : '');
/** A queued video: its place in line and when it should be ready. */
const waitingLabel = (r) =>
  `Waiting for analysis — ${r.queue_position === 1 ? 'next' : `number ${r.queue_position}`} in line${r.eta_sec != null ? `, ready in about ${r.eta_sec < 90 ? plural(Math.max(1, r.eta_sec), 'second') : plural(Math.round(r.eta_sec / 60), 'minute')}` : ''}`;

const KINDS = {
  shot: 'Shot',
  speech: 'Speech',
  transcript: 'Speech',
  ocr: 'On-screen text',
  object: 'Object',
  caption: 'Caption',
  audio: 'Sound',
  face: 'Person',
};

/** Says something to screen readers. */
function announce(msg) {
  const live = document.getElementById('live');
  live.textContent = '';
  setTimeout(() => (live.textContent = msg), 30);
}

/** A message under the header for a few seconds, optionally with an action button. */
function toast(msg, action) {
  const box = document.getElementById('toast');
  const btn =
    action &&
    h('button', { type: 'button', class: 'link', onclick: () => ((box.hidden = true), action.run()) }, action.label);
  box.replaceChildren(h('span', null, msg), btn ?? '');
  box.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => (box.hidden = true), action ? 10000 : 5000);
}

// ---------- the API

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function api(path, { method = 'GET', body, accept, signal } = {}) {
  const headers = { authorization: `Bearer ${S.token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (accept) headers.accept = accept;
  let res;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'the service cannot be reached');
  }
  if (!res.ok) {
    const j = await res.json().catch(() => null);
    const err = new ApiError(res.status, j?.message ?? `${res.status} ${res.statusText}`);
    if (res.status === 401 && S.token) signOut('The service did not accept the token; sign in again.');
    throw err;
  }
  return res;
}
const getJson = async (path, opts) => (await api(path, opts)).json();

/** The parsed `data:` objects of a server-sent-event response, as they arrive. */
async function* events(res) {
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value.replace(/\r\n/g, '\n');
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (!data) continue;
      try {
        yield JSON.parse(data);
      } catch {
        /* not JSON: ignore */
      }
    }
  }
}

// ---------- routing

function signOut(message) {
  S.token = null;
  sessionStorage.removeItem(TOKEN_KEY);
  S.signOutMessage = message;
  route();
}

function parseHash() {
  const [path, qs] = location.hash.replace(/^#\/?/, '').split('?');
  return { parts: path.split('/').filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(qs ?? '') };
}

function route() {
  for (const f of S.cleanup.splice(0)) {
    try {
      f();
    } catch {
      /* ignore */
    }
  }
  const main = document.getElementById('main');
  renderNav();
  const { parts, params } = parseHash();
  let view;
  if (!S.token) view = viewSignIn(main);
  else if (parts[0] === 'i' && parts[1]) view = viewIndex(main, parts[1]);
  else if (parts[0] === 'v' && parts[1] && parts[2]) view = viewVideo(main, parts[1], parts[2], params);
  else view = viewHome(main);
  Promise.resolve(view)
    .catch((e) => {
      if (e.name === 'AbortError' || (e.status === 401 && !S.token)) return;
      main.replaceChildren(
        h('h1', { tabindex: -1 }, 'Something went wrong'),
        h('p', { class: 'error', role: 'alert' }, e.message),
        h('p', null, h('a', { href: '#/' }, 'Back to the indexes')),
      );
    })
    .finally(() => {
      if (!route.marked) {
        route.marked = true;
        performance.mark('vidq-interactive');
      }
    });
}

/** Puts the heading in focus after a view change (keyboard and screen-reader users start there). */
function focusHeading(main) {
  const h1 = main.querySelector('h1');
  if (h1 && route.changed) h1.focus({ preventScroll: false });
}

function renderNav() {
  const nav = document.getElementById('nav');
  nav.replaceChildren(
    ...(S.token
      ? [
          h('a', { href: '#/' }, 'Indexes'),
          h('a', { href: '/swagger' }, 'API'),
          h('button', { type: 'button', class: 'link', onclick: () => signOut('Signed out.') }, 'Sign out'),
        ]
      : [h('a', { href: '/swagger' }, 'API')]),
  );
}

// ---------- sign in

function viewSignIn(main) {
  document.title = 'Sign in · vidq';
  const input = h('input', {
    id: 'token',
    name: 'token',
    type: 'password',
    autocomplete: 'off',
    spellcheck: false,
    required: true,
    'aria-describedby': 'token-help',
  });
  const msg = h('p', { class: 'error', role: 'alert' });
  const button = h('button', { type: 'submit' }, 'Sign in');
  const form = h(
    'form',
    {
      class: 'card narrow',
      onsubmit: async (e) => {
        e.preventDefault();
        const token = input.value.trim();
        if (!token) return;
        button.disabled = true;
        msg.textContent = '';
        try {
          const res = await fetch('/indexes', { headers: { authorization: `Bearer ${token}` } });
          if (res.status === 401) throw new Error('This token is not valid (unknown or revoked).');
          if (!res.ok)
            throw new Error((await res.json().catch(() => null))?.message ?? `The service answered ${res.status}.`);
          S.token = token;
          sessionStorage.setItem(TOKEN_KEY, token);
          S.signOutMessage = null;
          route.changed = true;
          route();
        } catch (err) {
          msg.textContent = err.message === 'Failed to fetch' ? 'The service cannot be reached.' : err.message;
          button.disabled = false;
          input.focus();
        }
      },
    },
    h('h1', { tabindex: -1 }, 'Sign in'),
    S.signOutMessage && h('p', { class: 'note' }, S.signOutMessage),
    h('label', { for: 'token' }, 'Access token'),
    input,
    h(
      'p',
      { id: 'token-help', class: 'muted small' },
      "The default user's token is printed on the first start and kept in DATA_DIR/default-token.txt. It stays in this tab only (session storage).",
    ),
    msg,
    button,
  );
  main.replaceChildren(form);
  input.focus();
}

// ---------- uploads (add a video by URL, follow it until analysed)

function addVideoForm(index) {
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
      onsubmit: (e) => {
        e.preventDefault();
        const ref = index ? index.index_id : nameInput.value.trim();
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
  form.setNames = (names) => {
    datalist.replaceChildren(...names.map((n) => h('option', { value: n })));
    if (nameInput && !nameInput.value && names[0]) nameInput.value = names[0];
  };
  return form;
}

async function startUpload(ref, label, url) {
  const u = {
    id: ++uploadSeq,
    url,
    indexLabel: label,
    indexId: null,
    key: null,
    fileName: url.split(/[?#]/)[0].split('/').pop() || url,
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
  } catch (e) {
    Object.assign(u, { phase: 'done', stage: 'failed', error: e.message });
  }
  renderUploads();
  announce(u.stage === 'ready' ? `${u.fileName} is ready` : `${u.fileName} failed: ${u.error}`);
  S.onIndexesChanged?.();
}

function sample(u) {
  u.samples.push({ t: performance.now(), p: u.pct });
  if (u.samples.length > 60) u.samples.splice(1, 1);
}

/** Estimated seconds left from the progress so far in this stage (or the service's own estimate). */
function etaOf(u) {
  if (u.eta != null) return u.eta;
  const s = u.samples;
  if (s.length < 2) return null;
  const a = s[0];
  const b = s[s.length - 1];
  const dp = b.p - a.p;
  if (dp < 2 || b.p >= 100 || b.t - a.t < 1500) return null;
  return ((b.t - a.t) / 1000) * ((100 - b.p) / dp);
}

/** Polls the resource until its analysis ends. */
async function followAnalysis(u, ref) {
  const index = u.indexId ?? ref;
  for (;;) {
    if (u.stage === 'ready' || u.stage === 'failed') break;
    const list = await getJson(`/index-resources?index=${encodeURIComponent(index)}`);
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
function renderUploads() {
  for (const box of document.querySelectorAll('[data-uploads]')) {
    const filter = box.dataset.uploads;
    const list = S.uploads.filter(
      (u) => !filter || u.indexId === filter || (!u.indexId && u.indexLabel === box.dataset.name),
    );
    box.closest('section').hidden = list.length === 0;
    box.replaceChildren(...list.map(uploadRow));
  }
}

function uploadRow(u) {
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
          { class: 'button', href: `#/v/${encodeURIComponent(u.indexId)}/${encodeURIComponent(u.key)}` },
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

function uploadsSection(index) {
  const box = h('ul', { class: 'uploads', 'data-uploads': index?.index_id ?? '', 'data-name': index?.name ?? '' });
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'up-h', hidden: true },
    h('h2', { id: 'up-h' }, 'Uploads'),
    box,
  );
}

// ---------- home: the indexes

async function viewHome(main) {
  document.title = 'Indexes · vidq';
  const form = addVideoForm(null);
  const list = h('ul', { class: 'indexes', 'aria-busy': 'true' });
  const showDeleted = h('input', {
    type: 'checkbox',
    id: 'show-deleted',
    checked: S.showDeleted,
    onchange: (e) => {
      S.showDeleted = e.target.checked;
      load();
    },
  });
  main.replaceChildren(
    h('h1', { tabindex: -1, class: 'sr-only' }, 'Indexes'),
    form,
    dropZone(() => {
      const name = document.getElementById('add-index')?.value.trim();
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
  );
  renderUploads();
  focusHeading(main);

  let loading = 0;
  async function load() {
    const n = ++loading;
    const all = await getJson(`/indexes?include_deleted=${S.showDeleted}`);
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

function indexRow(i, reload) {
  const act = async (fn, done) => {
    try {
      await fn();
      await reload();
      done();
    } catch (e) {
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

// ---------- an index: its videos and questions about all of them

async function findIndex(indexId) {
  const all = await getJson('/indexes?include_deleted=true');
  const idx = all.find((i) => i.index_id === indexId);
  if (!idx) throw new ApiError(404, 'There is no such index (or it was purged).');
  return idx;
}

async function viewIndex(main, indexId) {
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

  let timer = 0;
  let stopped = false;
  S.cleanup.push(() => ((stopped = true), clearTimeout(timer)));
  const load = async () => {
    const rs = await getJson(`/index-resources?index=${encodeURIComponent(indexId)}`);
    if (stopped) return;
    list.setAttribute('aria-busy', 'false');
    list.replaceChildren(
      ...(rs.length
        ? rs.map((r) => videoRow(idx, r, load))
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

function videoRow(idx, r, reload) {
  const busy = r.status !== 'ready' && r.status !== 'failed';
  const remove = async () => {
    if (!confirm(`Remove ${r.file_name} from ${idx.name}? Its file and analysis are deleted.`)) return;
    try {
      await api('/remove-from-index', { method: 'POST', body: { project_id: idx.index_id, video_id: r.file_id } });
      toast(`Removed ${r.file_name}.`);
      await reload();
    } catch (e) {
      toast(e.message);
    }
  };
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
    h(
      'button',
      { type: 'button', class: 'link danger', onclick: remove, 'aria-label': `Remove ${r.file_name}` },
      'Remove',
    ),
  );
}

// ---------- a video: player, timeline, questions

async function viewVideo(main, indexId, fileId, params) {
  const [idx, rs] = await Promise.all([
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
    ...(!copyPending(r) && { src: r.playback_src ?? r.src }),
    'aria-label': `Video ${r.file_name}`,
  });
  const start = Number(params.get('t'));
  if (Number.isFinite(start) && start > 0)
    player.addEventListener('loadedmetadata', () => (player.currentTime = start), { once: true });
  const seek = (t) => {
    player.currentTime = t;
    announce(`Playing from ${fmtTime(t)}`);
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
    } catch (e) {
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
  });
  let shown = -1;
  const dropTimeline = [];
  S.cleanup.push(() => dropTimeline.splice(0).forEach((f) => f()));
  const load = async () => {
    const [segs, list] = await Promise.all([
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
    const want = pending ? null : (cur.playback_src ?? cur.src);
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
        cur.metadata?.duration || Math.max(0, ...segs.segments.map((s) => s.end)) || player.duration || 0;
      dropTimeline.splice(0).forEach((f) => f());
      if (segs.segments.some((s) => s.kind === 'face'))
        segs.people = await personLanes(indexId, fileId).catch(() => []);
      strip.replaceChildren(timeline(segs, duration, player, seek, dropTimeline));
      // A poster from the analysed frames (many videos open on black): one near the start.
      const f = segs.frames.find((x) => x.t >= Math.min(5, duration * 0.1)) ?? segs.frames[0];
      if (f && !player.poster) player.poster = f.url;
    }
    if (busy) timer = setTimeout(() => load().catch(() => {}), 2000);
  };
  await load();
}

/** The timeline strip: one lane per kind of finding (objects: one lane per label), a playhead, hover details. */
function timeline({ segments, frames, people }, duration, player, seek, cleanup) {
  if (!duration || !segments.length)
    return h(
      'p',
      { class: 'muted small' },
      segments.length ? 'The duration is unknown.' : 'Nothing has been found in this video yet.',
    );
  const of = (...kinds) => segments.filter((s) => kinds.includes(s.kind));
  const transcripts = of('transcript');
  const lanes = [
    { name: 'Shots', cls: 'shot', items: of('shot') },
    { name: 'Speech', cls: 'speech', items: transcripts.length ? transcripts : of('speech') },
    { name: 'On-screen text', cls: 'ocr', items: of('ocr') },
  ];
  // Objects: the labels seen longest get a lane each; the rest share one.
  const objects = of('object');
  const seen = new Map();
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

  const pct = (t) => `${Math.min(100, Math.max(0, (t / duration) * 100))}%`;
  const frameNear = (t) =>
    frames.reduce((best, f) => (!best || Math.abs(f.t - t) < Math.abs(best.t - t) ? f : best), null);
  const tip = h('div', { class: 'tip', role: 'tooltip', id: 'tl-tip', hidden: true });
  const box = h('div', { class: 'timeline' });

  const showTip = (seg, el) => {
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
      seg.confidence != null && h('div', { class: 'muted small' }, `confidence ${Math.round(seg.confidence * 100)} %`),
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
        onmouseenter: (e) => showTip(seg, e.currentTarget),
        onmouseleave: hideTip,
        onfocus: (e) => showTip(seg, e.currentTarget),
        onblur: hideTip,
        onkeydown: (e) => {
          if (e.key === 'Escape') return hideTip();
          const all = [...track.querySelectorAll('.seg')];
          const k = all.indexOf(e.currentTarget);
          const next = { ArrowRight: k + 1, ArrowLeft: k - 1, Home: 0, End: all.length - 1 }[e.key];
          if (next === undefined || !all[next]) return;
          e.preventDefault();
          e.currentTarget.tabIndex = -1;
          all[next].tabIndex = 0;
          all[next].focus();
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
      { class: `lane${lane.group && li > 0 && lanes[li - 1].group === lane.group ? ' same-group' : ''}` },
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
    const ticks = [];
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

// ---------- questions

/**
 * The question form and its streamed answer. With a `video`, the scope can be the whole index, the
 * video, or the player's current moment; citation chips seek the player (or open the video).
 */
function askPanel({ indexId, video, player, seek }) {
  const id = (s) => `ask-${s}`;
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
  let ctrl = null;
  S.cleanup.push(() => ctrl?.abort());

  const cite = (e) => {
    if (player && video && e.video_id === video.file_id) seek(e.start);
    else location.hash = `#/v/${encodeURIComponent(indexId)}/${encodeURIComponent(e.video_id)}?t=${e.start}`;
  };

  const renderChips = (evidence) => {
    const many = evidence.length > 8;
    const make = (list) =>
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
  const renderAnswer = (text, evidence) => {
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
      onsubmit: async (ev) => {
        ev.preventDefault();
        const q = prompt.value.trim();
        if (!q) return;
        ctrl?.abort();
        const mine = (ctrl = new AbortController());
        const scope = form.querySelector('input[name=scope]:checked')?.value ?? 'index';
        // /inquire's schema asks for the token in the body; it travels in the POST body, never in a URL.
        const body = { token: S.token, index: indexId, prompt: q };
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
            } catch (e) {
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
        } catch (e) {
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

// ---------- start

// ---------- people (faces grouped across an index): the panel of an index, a lane per person

/** The People card of an index: a face thumbnail per person; click a name to name them; merge two. */
function peoplePanel(idx) {
  const base = `/indexes/${encodeURIComponent(idx.index_id)}/people`;
  const grid = h('ul', { class: 'people', 'aria-busy': 'true' });
  const card = h('section', { class: 'card', 'aria-labelledby': 'p-h' }, h('h2', { id: 'p-h' }, 'People'), grid);
  const label = (p, i) => p.name ?? `Person ${i + 1}`;
  const load = async () => {
    const people = await getJson(base);
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
          } catch (e) {
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
          } catch (e) {
            toast(e.message);
          }
        });
        // The appearances, on demand: each links to its moment; a wrongly grouped one can be split out.
        const apps = h('ul', { class: 'appearances small', hidden: true });
        const showApps = async () => {
          if (!apps.hidden) return (apps.hidden = true);
          const d = await getJson(`${base}/${encodeURIComponent(p.person_id)}`);
          apps.replaceChildren(
            ...d.appearances.map((a) =>
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
                        } catch (e) {
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
              onclick: () => showApps().catch((e) => toast(e.message)),
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
  card.refresh = () => load().catch((e) => grid.replaceChildren(h('li', { class: 'error small' }, e.message)));
  return card;
}

/** The timeline lanes of the people seen in one video: their appearances there. */
async function personLanes(indexId, fileId) {
  const base = `/indexes/${encodeURIComponent(indexId)}/people`;
  const people = await getJson(base);
  const here = people.filter((p) => p.videos.includes(fileId));
  const details = await Promise.all(here.map((p) => getJson(`${base}/${encodeURIComponent(p.person_id)}`)));
  return details.map((d) => {
    const name = d.name ?? `Person ${people.findIndex((p) => p.person_id === d.person_id) + 1}`;
    return {
      name,
      items: d.appearances
        .filter((a) => a.video_id === fileId)
        .map((a) => ({ kind: 'face', start: a.start, end: a.end, text: name, confidence: null })),
    };
  });
}

// The skip link must not change the hash (that is the router's).
document.querySelector('.skip')?.addEventListener('click', (e) => {
  e.preventDefault();
  document.getElementById('main').focus();
});
window.addEventListener('hashchange', () => {
  route.changed = true;
  route();
});
route();

// ---------- issue 14: files from this computer, search moments, downloads

/**
 * Drop (or pick) files to upload into the index; several at once, each with its own row in the
 * uploads list: bytes sent (XMLHttpRequest reports upload progress, fetch does not), then the
 * analysis stage and estimate like URL uploads. `refOf` gives the index to upload into (home: the
 * name typed in the form above).
 */
function dropZone(refOf) {
  const input = h('input', {
    type: 'file',
    id: 'drop-files',
    multiple: true,
    accept: 'video/*,.mkv,.webm,.mov,.avi,.ts,.m4v',
    class: 'sr-only',
    onchange: (e) => take(e.target.files),
  });
  const take = (files) => {
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
  const over = (on) => (e) => {
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

async function startFileUpload(ref, label, file) {
  const u = {
    id: ++uploadSeq,
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
    const j = await new Promise((resolve, reject) => {
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
    const rs = await getJson(`/index-resources?index=${encodeURIComponent(ref)}`);
    const r = rs.find((x) => x.file_id === u.key);
    u.indexId = (await getJson('/indexes')).find((i) => i.name === ref || i.index_id === ref)?.index_id ?? null;
    if (r?.status === 'ready') u.stage = 'ready';
    renderUploads();
    await followAnalysis(u, ref);
  } catch (e) {
    if (e.status === 401) return;
    Object.assign(u, { phase: 'done', stage: 'failed', error: e.message });
  }
  renderUploads();
  announce(u.stage === 'ready' ? `${u.fileName} is ready` : `${u.fileName} failed: ${u.error}`);
  S.onIndexesChanged?.();
}

/** The search box of an index page: a grid of matching moments (frame, time, file, why); a click opens the video there. */
function searchPanel(idx) {
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
  let next = null;
  let query = '';
  const load = async (offset) => {
    const page = await getJson(
      `/search?index=${encodeURIComponent(idx.index_id)}&q=${encodeURIComponent(query)}&limit=12&offset=${offset}`,
    );
    if (offset === 0) grid.replaceChildren();
    if (offset === 0 && !page.moments.length)
      grid.replaceChildren(h('li', { class: 'empty muted' }, 'No moment matches; try other words.'));
    grid.append(...page.moments.map((m) => momentCard(idx, m)));
    next = page.next_offset;
    more.hidden = next === null;
    announce(`${plural(page.total, 'moment')} found`);
  };
  more.onclick = () => load(next).catch((e) => toast(e.message));
  return h(
    'section',
    { class: 'card search', 'aria-labelledby': 'search-h' },
    h('h2', { id: 'search-h' }, 'Search moments'),
    h(
      'form',
      {
        role: 'search',
        class: 'fields',
        onsubmit: (e) => {
          e.preventDefault();
          query = q.value.trim();
          if (query) load(0).catch((err) => toast(err.message));
        },
      },
      h('div', { class: 'field grow' }, h('label', { for: 'search-q' }, 'Find'), q),
      h('div', { class: 'field end' }, h('button', { type: 'submit' }, 'Search')),
    ),
    grid,
    more,
  );
}

function momentCard(idx, m) {
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

/** Download links of a video's analysis; fetched with the token (never put in a URL), saved as files. */
function exportLinks(r) {
  const save = (path, name) => async (e) => {
    e.preventDefault();
    try {
      const res = await api(path);
      const a = h('a', { href: URL.createObjectURL(await res.blob()), download: name });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    } catch (err) {
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
function copyPending(r) {
  return r.metadata?.analysis?.playback?.state === 'making';
}

/** Transcript segments of a video (speech recognised plus subtitle cues), from its analysis summary. */
function transcriptSegments(r) {
  const a = r.metadata?.analysis ?? {};
  return (a.speech?.segments ?? 0) + (a.subtitles?.segments ?? 0);
}
