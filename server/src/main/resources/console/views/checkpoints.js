// Checkpoints of the sandbox (take, fork from, delete) and its fork tree as a picture: from its
// oldest ancestor down through every fork.
import { get, post, del } from '../api.js';
import { h, svg, show, field, bytes, when, notice, busy } from '../dom.js';

const MAX_TREE = 200;
const NODE_W = 190;
const NODE_H = 44;
const GAP_X = 24;
const GAP_Y = 36;

export async function render(panel, sandbox, me) {
  const path = `/v1/sandboxes/${encodeURIComponent(sandbox.id)}`;
  const body = h('tbody');
  const tree = h('figure', { class: 'tree' });
  const name = h('input', { name: 'checkpoint-name', placeholder: 'optional' });
  const memory = h('input', { type: 'checkbox', name: 'memory', checked: true });
  const take = h('button', { type: 'button' }, 'Take checkpoint');
  const count = h('input', { type: 'number', name: 'fork-count', min: '1', max: '100', value: '1' });
  const forkNow = h('button', { type: 'button' }, 'Fork now');

  async function list() {
    const answer = await get(`${path}/checkpoints`);
    body.replaceChildren(...answer.items.slice().reverse().map((c) => {
      const fork = h('button', { type: 'button' }, 'Fork');
      fork.addEventListener('click', () => busy(fork, async () => {
        const forks = await post(`${path}/fork`, { checkpoint: c.id, count: Number(count.value) || 1 });
        notice(`Forked ${forks.items.map((s) => s.id).join(', ')} from ${c.id}`);
        await drawTree();
      }));
      const remove = h('button', { type: 'button', class: 'danger' }, 'Delete');
      remove.addEventListener('click', () => {
        if (!confirm(`Delete checkpoint ${c.name || c.id}? Its forks keep their files.`)) return;
        busy(remove, async () => {
          await del(`/v1/checkpoints/${c.id}`);
          await list();
        });
      });
      return h('tr', {},
        h('td', { class: 'mono' }, c.id, c.name ? h('div', {}, c.name) : null),
        h('td', {}, c.memory ? 'files + memory' : 'files'),
        h('td', {}, c.purpose),
        h('td', {}, bytes(c.sizeBytes)),
        h('td', {}, c.upload + (c.durable ? ' (durable)' : '')),
        h('td', {}, when(c.createdAt)),
        h('td', {}, h('div', { class: 'actions' }, fork, remove)));
    }));
  }

  async function drawTree() {
    let root = sandbox;
    const seen = new Set([root.id]);
    while (root.parentId && !seen.has(root.parentId)) {
      try {
        root = await get(`/v1/sandboxes/${encodeURIComponent(root.parentId)}`);
        seen.add(root.id);
      } catch {
        break; // the parent was deleted: the tree starts here
      }
    }
    let nodes = 0;
    async function grow(node) {
      nodes++;
      const forks = nodes < MAX_TREE ? (await get(`/v1/sandboxes/${encodeURIComponent(node.id)}/forks`).catch(() => ({ items: [] }))).items : [];
      node.children = [];
      for (const child of forks) {
        if (nodes >= MAX_TREE) break;
        node.children.push(await grow(child));
      }
      return node;
    }
    await grow(root);
    show(tree, picture(root, sandbox.id), h('figcaption', {}, `The fork tree of ${root.name || root.id}`, nodes >= MAX_TREE ? ` (first ${MAX_TREE})` : ''));
  }

  take.addEventListener('click', () => busy(take, async () => {
    const body = { memory: memory.checked };
    if (name.value) body.name = name.value;
    const checkpoint = await post(`${path}/checkpoints`, body);
    notice(`Checkpoint ${checkpoint.id} taken`);
    name.value = '';
    await list();
  }));
  forkNow.addEventListener('click', () => busy(forkNow, async () => {
    const forks = await post(`${path}/fork`, { count: Number(count.value) || 1 });
    notice(`Forked ${forks.items.map((s) => s.id).join(', ')}`);
    await Promise.all([list(), drawTree()]);
  }));

  const canChange = me.kind === 'key' || (me.permissions || []).includes('checkpoints');
  show(panel,
    canChange ? h('div', { class: 'toolbar' }, field('Name', name), field('With memory', memory), take, field('Forks', count), forkNow) : null,
    h('table', { class: 'list', 'aria-label': 'Checkpoints' },
      h('thead', {}, h('tr', {}, ['Checkpoint', 'Holds', 'Purpose', 'Image', 'Upload', 'Taken', ''].map((c) => h('th', { scope: 'col' }, c)))), body),
    h('h3', {}, 'Fork tree'), tree);
  await Promise.all([list(), drawTree()]);
  return undefined;
}

/** The tree laid out top-down: leaves side by side, each parent centred over its children. */
function picture(root, current) {
  let nextX = 0;
  let depth = 0;
  const placed = [];
  (function place(node, level) {
    depth = Math.max(depth, level);
    if (!node.children.length) {
      node.x = nextX;
      nextX += NODE_W + GAP_X;
    } else {
      node.children.forEach((child) => place(child, level + 1));
      node.x = (node.children[0].x + node.children[node.children.length - 1].x) / 2;
    }
    node.y = level * (NODE_H + GAP_Y);
    placed.push(node);
  })(root, 0);
  const width = Math.max(nextX - GAP_X, NODE_W);
  const height = (depth + 1) * (NODE_H + GAP_Y) - GAP_Y;
  const edges = placed.flatMap((node) => node.children.map((child) => svg('path', {
    class: 'edge', d: `M${node.x + NODE_W / 2},${node.y + NODE_H} C${node.x + NODE_W / 2},${node.y + NODE_H + GAP_Y / 2} ${child.x + NODE_W / 2},${child.y - GAP_Y / 2} ${child.x + NODE_W / 2},${child.y}`,
  })));
  const boxes = placed.map((node) => {
    const link = svg('a', { href: `#/sandboxes/${node.id}`, 'data-sandbox': node.id, 'aria-label': `${node.name || node.id}, ${node.state}` },
      svg('rect', { class: `node node-${node.state}${node.id === current ? ' current' : ''}`, x: node.x, y: node.y, width: NODE_W, height: NODE_H, rx: 6 }),
      svg('text', { x: node.x + 10, y: node.y + 18, class: 'node-id' }, node.name || node.id),
      svg('text', { x: node.x + 10, y: node.y + 35, class: 'node-state' }, node.state));
    return link;
  });
  return svg('svg', { class: 'fork-tree', viewBox: `-2 -2 ${width + 4} ${height + 4}`, width: width + 4, height: height + 4, role: 'img' },
    svg('title', {}, 'Fork tree'), ...edges, ...boxes);
}
