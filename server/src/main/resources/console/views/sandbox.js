// One sandbox: its state (live from its events), its actions, and tabs for the terminal,
// processes, files, checkpoints and forks, previews, network and resources.
import { get, followAlways } from '../api.js';
import { h, show, stateBadge, when, busy, bytes } from '../dom.js';
import { actionsFor, act } from './sandboxes.js';
import * as terminal from './terminal.js';
import * as processes from './processes.js';
import * as files from './files.js';
import * as checkpoints from './checkpoints.js';
import * as previews from './previews.js';
import * as network from './network.js';
import * as resources from './resources.js';

const TABS = [
  ['overview', 'Overview', resources],
  ['terminal', 'Terminal', terminal],
  ['processes', 'Processes', processes],
  ['files', 'Files', files],
  ['checkpoints', 'Checkpoints and forks', checkpoints],
  ['previews', 'Previews', previews],
  ['network', 'Network', network],
];

export async function render(main, { id, tab }, me) {
  const controller = new AbortController();
  let sandbox;
  try {
    sandbox = await get(`/v1/sandboxes/${encodeURIComponent(id)}`);
  } catch (e) {
    show(main, h('h1', {}, 'Sandbox not found'),
      h('p', { class: 'error', role: 'alert' }, e.status === 404 ? `No sandbox ${id} is yours to see.` : e.message),
      h('p', {}, h('a', { href: '#/sandboxes' }, 'Back to the sandboxes')));
    return undefined;
  }
  const base = `#/sandboxes/${encodeURIComponent(id)}`;
  const current = TABS.find(([name]) => name === tab) || TABS[0];
  const state = h('span', { id: 'sandbox-state' });
  const actions = h('div', { class: 'actions' });
  const summary = h('dl', { class: 'summary' });
  const panel = h('section', { class: 'panel', 'aria-label': current[1] });

  function drawHeader() {
    show(state, stateBadge(sandbox.state));
    actions.replaceChildren();
    if (me.kind === 'key') {
      for (const [label, verb] of actionsFor(sandbox.state)) {
        const button = h('button', { type: 'button', 'data-action': verb }, label);
        button.addEventListener('click', () => busy(button, async () => {
          const answer = await act(sandbox.id, verb);
          if (answer && answer.state) sandbox = answer;
          drawHeader();
          if (verb === 'fork' || verb === 'checkpoint') {
            tabEnded();
            openTab();
          }
        }));
        actions.append(button);
      }
    }
    show(summary,
      ...entry('Id', h('span', { class: 'mono' }, sandbox.id)),
      ...entry('Template', sandbox.template),
      ...entry('Runtime', sandbox.runtime),
      ...entry('Created', when(sandbox.createdAt)),
      ...entry('Generation', sandbox.generation),
      ...entry('Resources', `${sandbox.resources.cpus} CPU, ${sandbox.resources.memoryMb} MB, ${bytes(sandbox.resources.diskMb * 1048576)} disk`),
      ...(sandbox.parentId ? entry('Forked from', h('a', { href: `#/sandboxes/${sandbox.parentId}` }, sandbox.parentId)) : []),
      ...(sandbox.hibernation ? entry('Hibernation image', bytes(sandbox.hibernation.imageBytes)) : []));
  }

  let tabEnded = () => {};
  async function openTab() {
    const ended = await current[2].render(panel, sandbox, me, controller.signal);
    tabEnded = typeof ended === 'function' ? ended : () => {};
  }

  show(main,
    h('div', { class: 'title' }, h('h1', {}, sandbox.name || sandbox.id), state, h('span', { class: 'live' }, 'live')),
    actions,
    summary,
    h('nav', { class: 'tabs', 'aria-label': 'Sandbox sections' },
      TABS.map(([name, label]) => h('a', { href: `${base}/${name}`, 'aria-current': name === current[0] ? 'page' : null }, label))),
    panel);
  drawHeader();
  await openTab();

  followAlways(`/v1/sandboxes/${encodeURIComponent(id)}/events?after=now`, (type, data) => {
    if (type !== 'lifecycle') return;
    sandbox = { ...sandbox, state: data.to };
    drawHeader();
    if (data.to === 'running' || data.to === 'hibernated')
      get(`/v1/sandboxes/${encodeURIComponent(id)}`).then((fresh) => { sandbox = fresh; drawHeader(); }).catch(() => {});
  }, controller.signal);
  return () => {
    tabEnded();
    controller.abort();
  };
}

function entry(term, value) {
  return [h('dt', {}, term), h('dd', {}, value)];
}
