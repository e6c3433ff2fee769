// The sandbox's network policy (edited whole, as the API replaces it whole) and the connections
// it refused, live from the events stream.
import { get, put, follow } from '../api.js';
import { h, show, field, when, notice, busy } from '../dom.js';

export async function render(panel, sandbox, me, pageSignal) {
  const path = `/v1/sandboxes/${encodeURIComponent(sandbox.id)}`;
  const controller = new AbortController();
  const info = h('dl', { class: 'summary' });
  const egressDefault = h('select', { name: 'default' }, h('option', { value: 'deny' }, 'deny'), h('option', { value: 'allow' }, 'allow'));
  const allow = h('textarea', { name: 'allow', rows: 4, spellcheck: 'false', placeholder: 'one entry a line: pypi.org, *.github.com, 192.0.2.0/24' });
  const deny = h('textarea', { name: 'deny', rows: 3, spellcheck: 'false' });
  const save = h('button', { type: 'button' }, 'Replace the policy');
  const denied = h('ol', { class: 'changes', 'aria-label': 'Refused connections', 'aria-live': 'polite' });
  let current;

  async function load() {
    current = await get(`${path}/network`, pageSignal);
    show(info,
      h('dt', {}, 'Address'), h('dd', {}, current.enabled ? current.address : 'no network (the service runs with --network none)'),
      h('dt', {}, 'Refused packets'), h('dd', {}, current.deniedConnections));
    egressDefault.value = current.egress.default;
    allow.value = current.egress.allow.join('\n');
    deny.value = current.egress.deny.join('\n');
  }

  const lines = (area) => area.value.split(/[\n,]/).map((s) => s.trim()).filter(Boolean);
  save.addEventListener('click', () => busy(save, async () => {
    await put(`${path}/network`, { egress: { default: egressDefault.value, allow: lines(allow), deny: lines(deny) }, rules: current.rules });
    notice('Policy replaced');
    await load();
  }));

  const canChange = me.kind === 'key' || (me.permissions || []).includes('network');
  show(panel, info,
    h('form', { class: 'card', 'aria-label': 'Egress policy', onsubmit: (e) => e.preventDefault() },
      h('h3', {}, 'Egress policy'), field('Default', egressDefault), field('Allow', allow), field('Deny', deny), canChange ? save : null),
    h('h3', {}, 'Refused connections (live)'), denied);
  await load();
  if (me.kind === 'key' || (me.permissions || []).includes('sandbox:read')) {
    follow(`${path}/events?after=0`, (type, data) => {
      if (type !== 'network.denied') return;
      denied.prepend(h('li', {}, h('span', { class: 'change change-delete' }, data.protocol), ' ',
        `${data.domain || data.address}:${data.port}`, h('span', { class: 'muted' }, ` ${data.rule}`)));
      while (denied.children.length > 200) denied.lastChild.remove();
    }, controller.signal).catch(() => {});
  }
  return () => controller.abort();
}
