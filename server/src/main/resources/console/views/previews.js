// The sandbox's previews: open one on a port (public, or private with a token shown once), copy
// its URL, revoke it.
import { get, post, del } from '../api.js';
import { h, show, field, when, notice, busy } from '../dom.js';

export async function render(panel, sandbox) {
  const path = `/v1/sandboxes/${encodeURIComponent(sandbox.id)}/previews`;
  const body = h('tbody');
  const created = h('div', { class: 'created', 'aria-live': 'polite' });
  const port = h('input', { type: 'number', name: 'port', min: '0', max: '65535', value: '8000', required: true });
  const isPublic = h('input', { type: 'checkbox', name: 'public' });
  const ttl = h('input', { type: 'number', name: 'ttl', min: '1', placeholder: 'never expires' });
  const create = h('button', { type: 'button' }, 'Open preview');

  function copyButton(text) {
    return h('button', { type: 'button', onclick: () => navigator.clipboard.writeText(text).then(() => notice('Copied'), () => notice('Copy failed', 'error')) }, 'Copy URL');
  }

  async function list() {
    const answer = await get(path);
    body.replaceChildren(...answer.items.slice().reverse().map((p) => {
      const remove = h('button', { type: 'button', class: 'danger' }, 'Revoke');
      remove.addEventListener('click', () => busy(remove, async () => {
        await del(`${path}/${p.id}`);
        await list();
      }));
      return h('tr', {},
        h('td', {}, p.port === 0 ? 'every port' : p.port),
        h('td', {}, p.public ? 'public' : 'private'),
        h('td', {}, h('a', { href: p.url, target: '_blank', rel: 'noopener noreferrer' }, p.url)),
        h('td', {}, when(p.createdAt)),
        h('td', {}, p.expiresAt ? when(p.expiresAt) : 'never'),
        h('td', {}, h('div', { class: 'actions' }, copyButton(p.url), remove)));
    }));
  }

  create.addEventListener('click', () => busy(create, async () => {
    const request = { port: Number(port.value), public: isPublic.checked };
    if (ttl.value) request.ttlSeconds = Number(ttl.value);
    const preview = await post(path, request);
    const link = preview.token ? `${preview.url}?stasis_preview_token=${encodeURIComponent(preview.token)}` : preview.url;
    show(created, h('p', {}, preview.token ? 'A private preview: this link carries its token, shown only now.' : 'A public preview:'),
      h('p', {}, h('a', { href: link, target: '_blank', rel: 'noopener noreferrer', class: 'mono' }, link), ' ', copyButton(link)));
    await list();
  }));

  show(panel,
    h('div', { class: 'toolbar' }, field('Port', port), field('Public', isPublic), field('Expires after (s)', ttl), create),
    created,
    h('table', { class: 'list', 'aria-label': 'Previews' },
      h('thead', {}, h('tr', {}, ['Port', 'Access', 'URL', 'Created', 'Expires', ''].map((c) => h('th', { scope: 'col' }, c)))), body));
  await list();
  return undefined;
}
