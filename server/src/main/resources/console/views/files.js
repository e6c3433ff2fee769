// The sandbox's files: a directory at a time, a viewer and editor for text files, and the
// changes under the directory shown live (the files watch stream).
import { get, del, follow, readText, writeText } from '../api.js';
import { h, show, field, bytes, when, notice, busy } from '../dom.js';

const EDITABLE_BYTES = 2 * 1024 * 1024;

export async function render(panel, sandbox, me, pageSignal) {
  const base = `/v1/sandboxes/${encodeURIComponent(sandbox.id)}/files`;
  const crumbs = h('nav', { class: 'crumbs', 'aria-label': 'Directory' });
  const body = h('tbody');
  const editor = h('div', { class: 'editor' });
  const changes = h('ol', { class: 'changes', 'aria-label': 'Changes under this directory', 'aria-live': 'polite' });
  let directory = '/root';
  let watching = null;
  let relist = null; // the listing read again once a burst of changes is over

  const join = (dir, name) => (dir === '/' ? `/${name}` : `${dir}/${name}`);

  /** Shows directory `dir` and watches it; a directory that cannot be listed leads to `/`. */
  async function open(dir) {
    let answer;
    try {
      answer = await get(`${base}/list?path=${encodeURIComponent(dir)}&limit=1000`, pageSignal);
    } catch (e) {
      notice(e.message, 'error');
      if (dir !== '/') return open('/');
      return undefined;
    }
    directory = dir;
    const parts = dir.split('/').filter(Boolean);
    show(crumbs, h('button', { type: 'button', class: 'link', onclick: () => open('/') }, '/'),
      parts.map((part, i) => [h('button', { type: 'button', class: 'link', onclick: () => open(`/${parts.slice(0, i + 1).join('/')}`) }, part), '/']));
    rows(answer);
    watch(dir);
    return answer;
  }

  function rows(answer) {
    body.replaceChildren(...answer.items.map((f) => h('tr', {},
      h('td', {}, h('button', { type: 'button', class: 'link', 'data-path': f.path,
        onclick: () => (f.type === 'dir' ? open(f.path) : edit(f.path)) }, f.name + (f.type === 'dir' ? '/' : ''))),
      h('td', {}, f.type === 'symlink' ? `-> ${f.symlinkTarget}` : f.type),
      h('td', {}, f.type === 'file' ? bytes(f.size) : ''),
      h('td', { class: 'mono' }, f.mode),
      h('td', {}, when(f.modifiedAt)))));
  }

  function watch(dir) {
    if (watching) watching.abort();
    watching = new AbortController();
    changes.replaceChildren();
    const controller = watching;
    follow(`${base}/watch?path=${encodeURIComponent(dir)}&recursive=true`, (type, data) => {
      if (type === 'ready') return;
      if (type === 'overflow') {
        changes.prepend(h('li', { class: 'muted' }, `watch ended (${data.reason}); reopen the directory to watch again`));
        return;
      }
      changes.prepend(h('li', { 'data-change': `${type} ${data.path}` },
        h('span', { class: `change change-${type}` }, type), ' ', data.path, data.from ? ` (from ${data.from})` : ''));
      while (changes.children.length > 200) changes.lastChild.remove();
      clearTimeout(relist);
      relist = setTimeout(() => {
        if (controller.signal.aborted) return;
        get(`${base}/list?path=${encodeURIComponent(dir)}&limit=1000`, pageSignal).then(rows).catch(() => {});
      }, 300);
    }, controller.signal).catch((e) => {
      if (!controller.signal.aborted) changes.prepend(h('li', { class: 'muted' }, `watch: ${e.message}`));
    });
  }

  async function edit(path, isNew = false) {
    let text = '';
    if (!isNew) {
      const stat = await get(`${base}/stat?path=${encodeURIComponent(path)}`).catch((e) => notice(e.message, 'error'));
      if (!stat) return;
      if (stat.size > EDITABLE_BYTES) {
        show(editor, h('p', {}, `${path} is ${bytes(stat.size)}: too large to edit here.`));
        return;
      }
      text = await readText(`${base}?path=${encodeURIComponent(path)}`).catch((e) => notice(e.message, 'error'));
      if (text === undefined) return;
    }
    const name = h('input', { name: 'path', value: path, spellcheck: 'false' });
    const area = h('textarea', { name: 'content', spellcheck: 'false', rows: 18, 'aria-label': 'File content' });
    area.value = text;
    const save = h('button', { type: 'button' }, 'Save');
    const remove = h('button', { type: 'button', class: 'danger' }, 'Delete');
    save.addEventListener('click', () => busy(save, async () => {
      const written = await writeText(`${base}?path=${encodeURIComponent(name.value)}`, area.value);
      notice(`Saved ${written.path} (${bytes(written.size)})`);
    }));
    remove.addEventListener('click', () => {
      if (!confirm(`Delete ${name.value}?`)) return;
      busy(remove, async () => {
        await del(`${base}?path=${encodeURIComponent(name.value)}`);
        notice(`Deleted ${name.value}`);
        editor.replaceChildren();
      });
    });
    show(editor, h('h3', {}, isNew ? 'New file' : path), field('Path', name), area, h('div', { class: 'toolbar' }, save, isNew ? null : remove));
    area.focus();
  }

  const newFile = h('button', { type: 'button', onclick: () => edit(join(directory, 'new-file.txt'), true) }, 'New file');
  show(panel,
    h('div', { class: 'toolbar' }, crumbs, newFile),
    h('div', { class: 'split' },
      h('div', {}, h('table', { class: 'list', 'aria-label': 'Files' },
        h('thead', {}, h('tr', {}, ['Name', 'Type', 'Size', 'Mode', 'Modified'].map((c) => h('th', { scope: 'col' }, c)))), body), editor),
      h('aside', {}, h('h3', {}, 'Changes (live)'), changes)));
  await open(directory);
  return () => {
    if (watching) watching.abort();
    clearTimeout(relist);
  };
}
