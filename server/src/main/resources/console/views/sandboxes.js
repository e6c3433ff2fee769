// The tenant's sandboxes: a live list (states change as the events stream says), filters, a
// create form and the lifecycle actions.
import { get, post, del, followAlways } from '../api.js';
import { h, show, field, stateBadge, when, notice, busy } from '../dom.js';

const STATES = ['running', 'paused', 'standby', 'hibernated', 'stopped'];

/** The actions a sandbox in `state` can take, as [label, verb]. */
export function actionsFor(state) {
  switch (state) {
    case 'running': return [['Pause', 'pause'], ['Standby', 'standby'], ['Hibernate', 'hibernate'], ['Stop', 'stop'], ['Fork', 'fork'], ['Checkpoint', 'checkpoint']];
    case 'paused': case 'standby': return [['Resume', 'resume'], ['Hibernate', 'hibernate'], ['Stop', 'stop'], ['Fork', 'fork'], ['Checkpoint', 'checkpoint']];
    case 'hibernated': return [['Resume', 'resume'], ['Stop', 'stop']];
    case 'stopped': return [['Start', 'start'], ['Checkpoint', 'checkpoint']];
    default: return [];
  }
}

/** Runs one lifecycle action; resolves to what the service answered. */
export async function act(id, verb) {
  const path = `/v1/sandboxes/${encodeURIComponent(id)}`;
  switch (verb) {
    case 'fork': {
      const forks = await post(`${path}/fork`, { count: 1 });
      notice(`Forked: ${forks.items.map((s) => s.id).join(', ')}`);
      return forks;
    }
    case 'checkpoint': {
      const checkpoint = await post(`${path}/checkpoints`, { memory: true });
      notice(`Checkpoint ${checkpoint.id} taken`);
      return checkpoint;
    }
    case 'delete':
      await del(path);
      notice(`Deleted ${id}`);
      return null;
    default: {
      const sandbox = await post(`${path}/${verb}`, {});
      notice(`${id}: ${sandbox.state}`);
      return sandbox;
    }
  }
}

export async function render(main) {
  const controller = new AbortController();
  const rows = new Map(); // id -> {sandbox, row}
  const stateFilter = h('select', { name: 'state' }, h('option', { value: '' }, 'any state'), STATES.map((s) => h('option', { value: s }, s)));
  const textFilter = h('input', { type: 'search', name: 'filter', placeholder: 'id, name, template or metadata' });
  const body = h('tbody');
  const empty = h('p', { class: 'muted', hidden: true }, 'No sandboxes yet.');
  const table = h('table', { class: 'list', 'aria-label': 'Sandboxes' },
    h('thead', {}, h('tr', {}, ['Sandbox', 'State', 'Template', 'Runtime', 'Created', 'Actions'].map((c) => h('th', { scope: 'col' }, c)))), body);

  function visible(sandbox) {
    if (stateFilter.value && sandbox.state !== stateFilter.value) return false;
    const text = textFilter.value.trim().toLowerCase();
    if (!text) return true;
    return [sandbox.id, sandbox.name, sandbox.template, ...Object.entries(sandbox.metadata || {}).map(([k, v]) => `${k}=${v}`)]
      .some((s) => s && s.toLowerCase().includes(text));
  }

  function row(sandbox) {
    const actions = h('div', { class: 'actions' });
    for (const [label, verb] of actionsFor(sandbox.state)) {
      const button = h('button', { type: 'button', 'data-action': verb, 'aria-label': `${label} ${sandbox.name || sandbox.id}` }, label);
      button.addEventListener('click', () => busy(button, async () => {
        await act(sandbox.id, verb);
        await reload();
      }));
      actions.append(button);
    }
    const remove = h('button', { type: 'button', class: 'danger', 'data-action': 'delete', 'aria-label': `Delete ${sandbox.name || sandbox.id}` }, 'Delete');
    remove.addEventListener('click', () => {
      if (!confirm(`Delete ${sandbox.name || sandbox.id}? Its files, memory and processes go.`)) return;
      busy(remove, async () => {
        await act(sandbox.id, 'delete');
        await reload();
      });
    });
    actions.append(remove);
    return h('tr', { 'data-id': sandbox.id },
      h('td', {}, h('a', { href: `#/sandboxes/${sandbox.id}` }, sandbox.name || sandbox.id), sandbox.name ? h('div', { class: 'muted mono' }, sandbox.id) : null,
        sandbox.parentId ? h('div', { class: 'muted' }, 'fork of ', h('a', { href: `#/sandboxes/${sandbox.parentId}` }, sandbox.parentId)) : null),
      h('td', {}, stateBadge(sandbox.state)),
      h('td', {}, sandbox.template),
      h('td', {}, sandbox.runtime),
      h('td', {}, when(sandbox.createdAt)),
      h('td', {}, actions));
  }

  function draw() {
    body.replaceChildren();
    let shown = 0;
    for (const { sandbox } of rows.values()) {
      if (!visible(sandbox)) continue;
      body.append(row(sandbox));
      shown++;
    }
    empty.hidden = shown > 0;
  }

  async function reload() {
    const items = [];
    let cursor = null;
    do {
      const page = await get(`/v1/sandboxes?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, controller.signal);
      items.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    rows.clear();
    for (const sandbox of items) rows.set(sandbox.id, { sandbox });
    draw();
  }

  let pending = null;
  function reloadSoon() {
    clearTimeout(pending);
    pending = setTimeout(() => reload().catch(() => {}), 200);
  }

  function onEvent(type, data) {
    if (type !== 'lifecycle' && type !== 'fork') return;
    const known = rows.get(data.sandboxId);
    if (type === 'lifecycle' && known && data.to !== 'gone' && data.to !== 'deleted') {
      known.sandbox = { ...known.sandbox, state: data.to };
      draw();
    } else reloadSoon();
  }

  stateFilter.addEventListener('change', draw);
  textFilter.addEventListener('input', draw);

  show(main,
    h('div', { class: 'title' }, h('h1', {}, 'Sandboxes'), h('span', { class: 'live', title: 'States follow the events stream' }, 'live')),
    createForm(reload),
    h('div', { class: 'filters', role: 'search' }, field('State', stateFilter), field('Filter', textFilter)),
    table, empty);
  await reload();
  // The tenant's events from now on; after a gap in the stream, the list is read again.
  followAlways('/v1/events?after=now', onEvent, controller.signal, reload);
  return () => {
    clearTimeout(pending);
    controller.abort();
  };
}

function createForm(reload) {
  const template = h('select', { name: 'template' });
  const name = h('input', { name: 'name', placeholder: 'optional' });
  const cpus = h('input', { name: 'cpus', type: 'number', min: '0.1', max: '64', step: '0.1', placeholder: 'default' });
  const memory = h('input', { name: 'memoryMb', type: 'number', min: '16', step: '1', placeholder: 'default' });
  const disk = h('input', { name: 'diskMb', type: 'number', min: '64', step: '1', placeholder: 'default' });
  const egress = h('select', { name: 'egress' }, h('option', { value: '' }, 'server default'),
    h('option', { value: 'deny' }, 'deny all but the list'), h('option', { value: 'allow' }, 'allow all but private ranges'));
  const allow = h('input', { name: 'allow', placeholder: 'pypi.org, *.github.com' });
  const volumes = h('input', { name: 'volumes', placeholder: 'datasets:/data, models:/models:ro' });
  const button = h('button', { type: 'submit' }, 'Create');
  const form = h('form', { class: 'card create', 'aria-label': 'Create a sandbox', onsubmit: submit },
    h('h2', {}, 'New sandbox'),
    h('div', { class: 'grid' }, field('Template', template), field('Name', name), field('CPUs', cpus), field('Memory (MB)', memory),
      field('Disk (MB)', disk), field('Egress', egress), field('Allowed destinations', allow), field('Volumes', volumes)),
    button);

  get('/v1/templates').then((list) => {
    for (const t of list.items) template.append(h('option', { value: t.name, disabled: t.status === 'failed' }, `${t.name} (${t.status})`));
    const tiny = list.items.find((t) => t.name === 'tiny');
    if (tiny) template.value = 'tiny';
  }).catch((e) => notice(e.message, 'error'));

  async function submit(event) {
    event.preventDefault();
    const body = { template: template.value };
    if (name.value) body.name = name.value;
    const resources = {};
    if (cpus.value) resources.cpus = Number(cpus.value);
    if (memory.value) resources.memoryMb = Number(memory.value);
    if (disk.value) resources.diskMb = Number(disk.value);
    if (Object.keys(resources).length) body.resources = resources;
    if (egress.value) {
      body.network = { egress: { default: egress.value, allow: allow.value.split(',').map((s) => s.trim()).filter(Boolean) } };
    }
    const mounts = volumes.value.split(',').map((s) => s.trim()).filter(Boolean);
    if (mounts.length) {
      body.volumes = mounts.map((m) => {
        const [volume, path, mode] = m.split(':');
        return { volume, path, readOnly: mode === 'ro' };
      });
    }
    await busy(button, async () => {
      const sandbox = await post('/v1/sandboxes', body);
      notice(`Created ${sandbox.id}`);
      name.value = '';
      await reload();
    });
  }
  return form;
}
