// Small DOM helpers: elements built as values (text is always text, never markup), and the
// formats the pages share.

/** An element: h('button', {onclick, class: 'x', 'aria-label': 'y'}, 'text', child, ...). */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else if (name === 'value') element.value = value;
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** An SVG element (the fork tree, the charts). */
export function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  append(element, children);
  return element;
}

/** Replaces the content of `element`. */
export function show(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

/** A labelled form field: the label's `for` names the input. */
export function field(label, input) {
  if (!input.id) input.id = `f-${Math.random().toString(36).slice(2, 9)}`;
  return h('div', { class: 'field' }, h('label', { for: input.id }, label), input);
}

export function stateBadge(state) {
  return h('span', { class: `state state-${state}`, 'data-state': state }, state);
}

export function bytes(n) {
  if (n === null || n === undefined) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n >= 10 || i === 0 ? Math.round(n) : n.toFixed(1)} ${units[i]}`;
}

export function when(iso) {
  if (!iso) return '-';
  const date = new Date(iso);
  return h('time', { datetime: iso, title: date.toISOString() }, date.toLocaleString());
}

let noticeTimer = null;

/** Tells the user what happened (role=status, read out by screen readers). */
export function notice(text, kind = 'info') {
  const area = document.getElementById('notice');
  show(area, h('p', { class: `notice notice-${kind}` }, text));
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => area.replaceChildren(), kind === 'error' ? 10000 : 4000);
}

/** Runs an action from a button: the button is busy meanwhile, a failure is told. */
export async function busy(button, action) {
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try {
    return await action();
  } catch (e) {
    notice(e.message, 'error');
    return undefined;
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
  }
}
