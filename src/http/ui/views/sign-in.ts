// The sign-in view: a token, checked against the API before it is kept.
import { h } from '../dom';
import { route, S, signIn } from '../state';

export function viewSignIn(main: HTMLElement) {
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
      onsubmit: async (e: SubmitEvent) => {
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
          signIn(token);
          S.routeChanged = true;
          route();
        } catch (err: any) {
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
