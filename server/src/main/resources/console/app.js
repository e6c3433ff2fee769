// The console's shell: who is signed in, the sections, and a hash router. Each page is a module
// whose render(main, params, me) returns a function that ends what it started (streams, sockets).
import { credential, whoami, ApiError } from './api.js';
import { h, show } from './dom.js';
import * as signIn from './views/signin.js';
import * as sandboxes from './views/sandboxes.js';
import * as sandbox from './views/sandbox.js';
import * as operators from './views/operators.js';

const ROUTES = [
  [/^#\/sign-in$/, signIn, () => ({})],
  [/^#\/sandboxes$/, sandboxes, () => ({})],
  [/^#\/sandboxes\/([^/]+)(?:\/([a-z]+))?$/, sandbox, (m) => ({ id: decodeURIComponent(m[1]), tab: m[2] || 'overview' })],
  [/^#\/operators(?:\/([a-z]+))?$/, operators, (m) => ({ tab: m[1] || 'tenants' })],
];

let me = null;
let cleanup = () => {};

async function identify() {
  if (!credential.get()) return null;
  try {
    return await whoami();
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) credential.clear();
    return null;
  }
}

function header() {
  const nav = document.getElementById('nav');
  const who = document.getElementById('who');
  if (!me) {
    nav.replaceChildren();
    who.replaceChildren();
    return;
  }
  const links = me.kind === 'token'
    ? [me.scope.sandbox ? h('a', { href: `#/sandboxes/${me.scope.sandbox}` }, 'Sandbox') : null]
    : [h('a', { href: '#/sandboxes' }, 'Sandboxes'), me.root ? h('a', { href: '#/operators' }, 'Operators') : null];
  show(nav, ...links);
  show(who,
    h('span', { title: `tenant ${me.tenantId}` }, `${me.root ? 'root' : me.kind} ${me.credentialId}`),
    h('button', { type: 'button', class: 'link', onclick: signOut }, 'Sign out'));
}

export function signOut() {
  credential.clear();
  me = null;
  location.hash = '#/sign-in';
}

/** After a successful sign-in: the credential is stored, then the landing page. */
export async function signedIn() {
  me = await identify();
  header();
  location.hash = me && me.kind === 'token' && me.scope.sandbox ? `#/sandboxes/${me.scope.sandbox}` : '#/sandboxes';
}

async function route() {
  cleanup();
  cleanup = () => {};
  if (me === null) me = await identify();
  header();
  let hash = location.hash || '#/sandboxes';
  if (!me && hash !== '#/sign-in') {
    location.hash = '#/sign-in';
    return;
  }
  if (me && hash === '#/sign-in') hash = '#/sandboxes';
  const main = document.getElementById('main');
  for (const [pattern, page, params] of ROUTES) {
    const match = hash.match(pattern);
    if (!match) continue;
    try {
      const ended = await page.render(main, params(match), me);
      cleanup = typeof ended === 'function' ? ended : () => {};
    } catch (e) {
      // e.g. a scoped token on the list of sandboxes, which only a key may see (403)
      show(main, h('h1', {}, 'This page cannot be shown'), h('p', { class: 'error', role: 'alert' }, e.message),
        h('p', {}, h('a', { href: '#/sandboxes' }, 'Back to the sandboxes')));
    }
    main.focus({ preventScroll: true });
    return;
  }
  show(main, h('h1', {}, 'Not found'), h('p', {}, 'No such page. ', h('a', { href: '#/sandboxes' }, 'Back to the sandboxes')));
}

window.addEventListener('hashchange', route);
route();
