// Sign-in: an API key or a scoped token, checked against the service before it is kept (in this
// tab's session storage only).
import { credential, whoami } from '../api.js';
import { h, show, field } from '../dom.js';
import { signedIn } from '../app.js';

export function render(main) {
  const input = h('input', { type: 'password', name: 'credential', autocomplete: 'off', required: true, spellcheck: 'false',
    placeholder: 'sk_... or st_...' });
  const error = h('p', { class: 'error', role: 'alert' });
  const button = h('button', { type: 'submit' }, 'Sign in');
  const form = h('form', { class: 'card narrow', onsubmit: submit },
    h('h1', {}, 'Sign in'),
    h('p', {}, 'An API key (the root key is in the data directory, root.key) or a scoped token.'),
    field('API key or token', input), error, button);

  async function submit(event) {
    event.preventDefault();
    error.textContent = '';
    button.disabled = true;
    credential.set(input.value.trim());
    try {
      await whoami();
      await signedIn();
    } catch (e) {
      credential.clear();
      error.textContent = e.status === 401 ? 'That key or token is not valid (unknown, revoked or expired).' : e.message;
      input.focus();
    } finally {
      button.disabled = false;
    }
  }

  show(main, form);
  input.focus();
}
