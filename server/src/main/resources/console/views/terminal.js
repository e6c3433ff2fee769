// A terminal in the sandbox: xterm.js over the terminal WebSocket. A new shell, or with a
// process id one that runs already (reattach: its recent output is replayed). Resizes follow the
// panel; closing the tab leaves an attached process running and hangs a new one up.
import { socket, get } from '../api.js';
import { h, show, field, notice } from '../dom.js';

export async function render(panel, sandbox) {
  const output = h('div', { class: 'terminal', 'aria-label': 'Terminal' });
  const status = h('p', { class: 'muted', role: 'status' });
  const attachTo = h('select', { name: 'attach' }, h('option', { value: '' }, 'a new shell'));
  const keep = h('input', { type: 'checkbox', name: 'keep' });
  const open = h('button', { type: 'button' }, 'Open');
  show(panel,
    h('div', { class: 'toolbar' }, field('Terminal', attachTo), field('Keep it running when closed', keep), open),
    status, output);

  try {
    const list = await get(`/v1/sandboxes/${encodeURIComponent(sandbox.id)}/processes`);
    for (const p of list.items.filter((p) => p.pty && p.status === 'running'))
      attachTo.append(h('option', { value: p.pid }, `pid ${p.pid}: ${p.cmd.join(' ')}`));
  } catch (e) {
    notice(e.message, 'error');
  }

  const term = new window.Terminal({ cursorBlink: true, screenReaderMode: true, fontSize: 14, convertEol: false });
  const fit = new window.FitAddon.FitAddon();
  term.loadAddon(fit);
  term.open(output);
  fit.fit();
  let ws = null;
  const encoder = new TextEncoder();

  function connect() {
    if (ws) ws.close();
    term.reset();
    const query = new URLSearchParams({ cols: term.cols, rows: term.rows });
    if (attachTo.value) {
      query.set('pid', attachTo.value);
      query.set('hangup', 'false');
    } else if (keep.checked) query.set('hangup', 'false');
    ws = socket(`/v1/sandboxes/${encodeURIComponent(sandbox.id)}/terminal?${query}`);
    ws.binaryType = 'arraybuffer';
    status.textContent = 'connecting...';
    ws.onopen = () => { status.textContent = 'connected'; term.focus(); };
    ws.onmessage = (message) => {
      if (typeof message.data !== 'string') {
        term.write(new Uint8Array(message.data));
        return;
      }
      const control = JSON.parse(message.data);
      if (control.type === 'started') status.textContent = `connected to pid ${control.pid}`;
      else if (control.type === 'exit') status.textContent = `the process ended (exit code ${control.exitCode})`;
      else if (control.type === 'error') status.textContent = `${control.code}: ${control.message}`;
    };
    ws.onclose = (event) => {
      if (status.textContent.startsWith('connect')) status.textContent = `closed${event.reason ? `: ${event.reason}` : ''}`;
    };
  }

  term.onData((data) => {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(encoder.encode(data));
  });
  term.onResize(({ cols, rows }) => {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'resize', cols, rows }));
  });
  const resized = new ResizeObserver(() => fit.fit());
  resized.observe(output);
  open.addEventListener('click', connect);
  connect();

  return () => {
    resized.disconnect();
    if (ws) ws.close();
    term.dispose();
  };
}
