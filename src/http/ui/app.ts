// vidq's web page: TypeScript modules with no dependencies, bundled by Bun and served from the
// executable by src/http/routes/ui.ts. It talks to the same HTTP API as any client, with the token
// in an `Authorization: Bearer` header (kept in sessionStorage, never in a URL); the `src` and
// `frame_url` links the API returns are signed, so <video> and <img> can load them directly.
//
// Views (hash routes, one module each under views/): sign-in; #/ indexes; #/i/<index_id> an index;
// #/v/<index_id>/<file_id>[?t=s] a video with its player, timeline and questions. This module is
// the router; state.ts holds what the views share.
import { h } from './dom';
import { S, setRouter, signOut } from './state';
import { viewHome } from './views/home';
import { viewIndex } from './views/index-page';
import { viewSignIn } from './views/sign-in';
import { viewVideo } from './views/video';

function parseHash() {
  const [path, qs] = location.hash.replace(/^#\/?/, '').split('?');
  return {
    parts: (path ?? '').split('/').filter(Boolean).map(decodeURIComponent),
    params: new URLSearchParams(qs ?? ''),
  };
}

let marked = false;

function route() {
  for (const f of S.cleanup.splice(0)) {
    try {
      f();
    } catch {
      /* ignore */
    }
  }
  const main = document.getElementById('main')!;
  renderNav();
  const { parts, params } = parseHash();
  let view: void | Promise<void>;
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
      if (!marked) {
        marked = true;
        performance.mark('vidq-interactive');
      }
    });
}

function renderNav() {
  const nav = document.getElementById('nav')!;
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

setRouter(route);
// The skip link must not change the hash (that is the router's).
document.querySelector('.skip')?.addEventListener('click', (e) => {
  e.preventDefault();
  document.getElementById('main')!.focus();
});
window.addEventListener('hashchange', () => {
  S.routeChanged = true;
  route();
});
route();
