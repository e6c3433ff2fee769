// The operator's pages (root key): tenants with their quotas, usage and keys; templates and their
// build logs; the blob store's usage and garbage collection; the nodes.
import { get, post } from '../api.js';
import { h, show, field, bytes, when, notice, busy } from '../dom.js';

const TABS = [['tenants', 'Tenants'], ['templates', 'Templates'], ['blobs', 'Blob store'], ['nodes', 'Nodes']];

export async function render(main, { tab }, me) {
  if (!me.root) {
    show(main, h('h1', {}, 'Operators'), h('p', { class: 'error', role: 'alert' }, 'These pages are for the root key.'));
    return undefined;
  }
  const panel = h('section', { class: 'panel' });
  show(main, h('h1', {}, 'Operators'),
    h('nav', { class: 'tabs', 'aria-label': 'Operator sections' },
      TABS.map(([name, label]) => h('a', { href: `#/operators/${name}`, 'aria-current': name === tab ? 'page' : null }, label))),
    panel);
  const controller = new AbortController();
  try {
    if (tab === 'templates') await templates(panel, controller.signal);
    else if (tab === 'blobs') await blobs(panel);
    else if (tab === 'nodes') await nodes(panel);
    else await tenants(panel);
  } catch (e) {
    show(panel, h('p', { class: 'error', role: 'alert' }, e.message));
  }
  return () => controller.abort();
}

const limit = (v) => (v === null || v === undefined ? 'no limit' : v);

async function tenants(panel) {
  const body = h('tbody');
  const keyShown = h('div', { 'aria-live': 'polite' });
  async function list() {
    const answer = await get('/v1/tenants');
    body.replaceChildren(...answer.items.map((t) => {
      const newKey = h('button', { type: 'button' }, 'New key');
      newKey.addEventListener('click', () => busy(newKey, async () => {
        const key = await post(`/v1/tenants/${t.id}/keys`, {});
        show(keyShown, h('p', { class: 'card' }, `A key for ${t.name} (shown this once): `, h('code', { class: 'secret' }, key.secret)));
      }));
      const quota = (q) => `${limit(q.runningSandboxes)} running, ${limit(q.memoryMb)} MB memory, ${limit(q.diskMb)} MB disk`;
      return h('tr', {},
        h('td', {}, t.name, h('div', { class: 'muted mono' }, t.id)),
        h('td', {}, quota(t.quota || {})),
        h('td', {}, `${t.usage.runningSandboxes} running, ${t.usage.memoryMb} MB memory, ${t.usage.diskMb} MB disk`),
        h('td', {}, when(t.createdAt)),
        h('td', {}, newKey));
    }));
  }
  const name = h('input', { name: 'tenant-name', pattern: '[a-z0-9\\-]{1,63}', required: true });
  const running = h('input', { type: 'number', name: 'quota-running', min: '0' });
  const memory = h('input', { type: 'number', name: 'quota-memory', min: '0' });
  const create = h('button', { type: 'submit' }, 'Create tenant');
  const form = h('form', { class: 'card', 'aria-label': 'Create a tenant', onsubmit: (e) => {
    e.preventDefault();
    busy(create, async () => {
      const quota = {};
      if (running.value) quota.runningSandboxes = Number(running.value);
      if (memory.value) quota.memoryMb = Number(memory.value);
      const tenant = await post('/v1/tenants', { name: name.value, quota });
      notice(`Tenant ${tenant.name} created`);
      name.value = '';
      await list();
    });
  } }, h('h2', {}, 'New tenant'), h('div', { class: 'grid' }, field('Name', name), field('Running sandboxes', running), field('Memory (MB)', memory)), create);
  show(panel, form, keyShown,
    h('table', { class: 'list', 'aria-label': 'Tenants' },
      h('thead', {}, h('tr', {}, ['Tenant', 'Quota', 'Usage', 'Created', ''].map((c) => h('th', { scope: 'col' }, c)))), body));
  await list();
}

async function templates(panel, signal) {
  const body = h('tbody');
  const log = h('pre', { class: 'log', 'aria-label': 'Build log' });
  const answer = await get('/v1/templates');
  body.replaceChildren(...answer.items.map((t) => h('tr', {},
    h('td', {}, t.name, t.description ? h('div', { class: 'muted' }, t.description) : null),
    h('td', {}, t.status + (t.progress !== null && t.progress !== undefined ? ` ${Math.round(t.progress * 100)}%` : ''), t.message ? h('div', { class: 'muted' }, t.message) : null),
    h('td', {}, t.version || '-'),
    h('td', {}, bytes(t.sizeBytes)),
    h('td', {}, when(t.builtAt)),
    h('td', {}, h('button', { type: 'button', onclick: async () => {
      log.textContent = '';
      try {
        const logs = await fetchLogs(t.name, signal);
        log.textContent = logs || '(no build log)';
      } catch (e) {
        log.textContent = e.message;
      }
    } }, 'Build log')))));
  show(panel, h('table', { class: 'list', 'aria-label': 'Templates' },
    h('thead', {}, h('tr', {}, ['Template', 'Status', 'Version', 'Size', 'Built', ''].map((c) => h('th', { scope: 'col' }, c)))), body), log);
}

/** The build's kept output, read page by page from its start. */
async function fetchLogs(name, signal) {
  let text = '';
  for (let offset = 0; ;) {
    const page = await get(`/v1/templates/${encodeURIComponent(name)}/logs?offset=${offset}`, signal);
    text += page.output;
    if (page.next === offset || !page.output) return text;
    offset = page.next;
  }
}

async function blobs(panel) {
  const status = await get('/v1/blobs');
  const gc = h('button', { type: 'button' }, 'Collect garbage now');
  const result = h('pre', { class: 'log', 'aria-live': 'polite' });
  gc.addEventListener('click', () => busy(gc, async () => {
    const done = await post('/v1/blobs/gc', {});
    result.textContent = `freed ${bytes(done.bytesFreed)}: ${done.chunksDeleted} chunks and ${done.manifestsDeleted} manifests deleted, ${done.chunksKept} chunks kept (${done.tookMs} ms)`;
  }));
  show(panel, h('dl', { class: 'summary' },
    h('dt', {}, 'Stored'), h('dd', {}, bytes(status.usage.storedBytes)),
    h('dt', {}, 'Manifests'), h('dd', {}, status.usage.manifests),
    h('dt', {}, 'Chunks'), h('dd', {}, status.usage.chunks),
    h('dt', {}, 'Collected every'), h('dd', {}, status.gcInterval || 'on demand only'),
    h('dt', {}, 'Last collection'), h('dd', {}, status.lastGc ? when(status.lastGc.finishedAt) : 'never'),
    h('dt', {}, 'Locks'), h('dd', {}, status.locks.length ? status.locks.map((l) => `${l.holder} (${l.kind}${l.stale ? ', stale' : ''})`).join(', ') : 'none')),
  gc, result);
}

async function nodes(panel) {
  const answer = await get('/v1/nodes');
  show(panel, h('table', { class: 'list', 'aria-label': 'Nodes' },
    h('thead', {}, h('tr', {}, ['Node', 'State', 'Sandboxes', 'Memory available', 'Disk free', 'Lease until'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, answer.items.map((n) => h('tr', {},
      h('td', {}, n.name, n.local ? ' (this one)' : '', h('div', { class: 'muted' }, n.advertiseUrl)),
      h('td', {}, !n.alive ? 'lost' : n.draining ? 'draining' : 'alive'),
      h('td', {}, n.sandboxes),
      h('td', {}, `${n.capacity.memoryAvailableMb} of ${n.capacity.memoryTotalMb} MB`),
      h('td', {}, `${n.capacity.diskFreeMb} MB`),
      h('td', {}, when(n.leaseUntil)))))));
}
