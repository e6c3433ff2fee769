// The sandbox's processes: the list, and one process's output followed live from an offset,
// with its signals.
import { get, post, follow } from '../api.js';
import { h, show, field, when, busy } from '../dom.js';

const SIGNALS = ['INT', 'TERM', 'HUP', 'KILL'];

export async function render(panel, sandbox, me, pageSignal) {
  const path = `/v1/sandboxes/${encodeURIComponent(sandbox.id)}/processes`;
  const body = h('tbody');
  const logPanel = h('div', { class: 'log-panel' });
  const refresh = h('button', { type: 'button' }, 'Refresh');
  let following = null;

  async function list() {
    const answer = await get(path, pageSignal);
    body.replaceChildren(...answer.items.slice().reverse().map((p) => h('tr', {},
      h('td', {}, h('button', { type: 'button', class: 'link', onclick: () => open(p) }, String(p.pid))),
      h('td', { class: 'mono' }, p.cmd.join(' ')),
      h('td', {}, p.tag || ''),
      h('td', {}, p.status + (p.status === 'exited' ? ` (${p.signal ? `SIG${p.signal}` : p.exitCode})` : '')),
      h('td', {}, when(p.startedAt)))));
  }

  function open(process) {
    if (following) following.abort();
    following = new AbortController();
    const offset = h('input', { type: 'number', min: '0', value: '0', name: 'offset' });
    const out = h('pre', { class: 'log', 'aria-live': 'off', 'aria-label': `Output of ${process.pid}` });
    const signals = SIGNALS.map((s) => {
      const button = h('button', { type: 'button', 'data-signal': s }, s);
      button.addEventListener('click', () => busy(button, async () => {
        await post(`${path}/${process.pid}/signal`, { signal: s });
        await list();
      }));
      return button;
    });
    const restart = h('button', { type: 'button' }, 'Follow from offset');
    const controller = following;
    async function start(from) {
      out.textContent = '';
      try {
        await follow(`${path}/${process.pid}/output?follow=true&offset=${from}&stderrOffset=${from}`, (type, data) => {
          if (type === 'stdout' || type === 'stderr') {
            out.append(type === 'stderr' ? h('span', { class: 'stderr' }, data.data) : data.data);
            out.scrollTop = out.scrollHeight;
          } else if (type === 'exit') out.append(h('span', { class: 'muted' }, `\n[exited: ${JSON.stringify(data.exitCode ?? data)}]\n`));
          else if (type === 'dropped') out.append(h('span', { class: 'muted' }, `[output ${data.from}-${data.to} was dropped]\n`));
        }, controller.signal);
      } catch (e) {
        if (!controller.signal.aborted) out.append(h('span', { class: 'stderr' }, `[${e.message}]`));
      }
    }
    restart.addEventListener('click', () => start(Number(offset.value) || 0));
    show(logPanel,
      h('h3', {}, `pid ${process.pid}: ${process.cmd.join(' ')}`),
      h('div', { class: 'toolbar' }, field('Offset', offset), restart, h('span', { class: 'muted' }, 'Signal:'), signals),
      out);
    start(0);
  }

  refresh.addEventListener('click', () => busy(refresh, list));
  show(panel,
    h('div', { class: 'toolbar' }, refresh),
    h('table', { class: 'list', 'aria-label': 'Processes' },
      h('thead', {}, h('tr', {}, ['Pid', 'Command', 'Tag', 'Status', 'Started'].map((c) => h('th', { scope: 'col' }, c)))), body),
    logPanel);
  await list();
  const timer = setInterval(() => list().catch(() => {}), 3000);
  return () => {
    clearInterval(timer);
    if (following) following.abort();
  };
}
