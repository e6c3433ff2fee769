// The overview's resources: CPU, memory and disk as small charts of the last few minutes, read
// every 2 s (reading does not wake the sandbox).
import { get } from '../api.js';
import { h, svg, show, bytes } from '../dom.js';

const POINTS = 90;
const WIDTH = 300;
const HEIGHT = 60;

export async function render(panel, sandbox, me, pageSignal) {
  const path = `/v1/sandboxes/${encodeURIComponent(sandbox.id)}/metrics`;
  const series = {
    cpu: { label: 'CPU', values: [], max: () => 100, format: (v) => `${v.toFixed(1)}%` },
    memory: { label: 'Memory', values: [], max: (m) => m.memoryLimitBytes, format: bytes },
    disk: { label: 'Disk', values: [], max: (m) => m.diskLimitBytes, format: bytes },
  };
  const charts = h('div', { class: 'charts' });
  let last = null;

  function chart(s) {
    const max = Math.max(last ? s.max(last) : 1, ...s.values, 1);
    const step = WIDTH / (POINTS - 1);
    const points = s.values.map((v, i) => `${(i + POINTS - s.values.length) * step},${HEIGHT - (v / max) * HEIGHT}`).join(' ');
    const now = s.values.length ? s.values[s.values.length - 1] : 0;
    return h('figure', { class: 'chart' },
      h('figcaption', {}, `${s.label}: ${s.format(now)}`, last ? h('span', { class: 'muted' }, ` of ${s.format(s.max(last))}`) : null),
      svg('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, width: WIDTH, height: HEIGHT, role: 'img', 'aria-label': `${s.label} over the last minutes` },
        svg('rect', { class: 'chart-bg', x: 0, y: 0, width: WIDTH, height: HEIGHT }),
        svg('polyline', { class: 'chart-line', points })));
  }

  async function sample() {
    try {
      last = await get(path, pageSignal);
    } catch {
      return;
    }
    const push = (s, v) => {
      s.values.push(v);
      if (s.values.length > POINTS) s.values.shift();
    };
    push(series.cpu, last.cpuUsedPercent);
    push(series.memory, last.memoryBytes);
    push(series.disk, last.diskBytes);
    show(charts, Object.values(series).map(chart),
      h('p', { class: 'muted' }, `${bytes(last.swappedBytes)} in swap; ${last.cpuSeconds.toFixed(1)} s of CPU since its processes started`));
  }

  show(panel, h('h2', {}, 'Resources'), charts);
  await sample();
  const timer = setInterval(sample, 2000);
  return () => clearInterval(timer);
}
