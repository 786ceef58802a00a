// The one floating tooltip of a page: a title and formula lines, text only (textContent).
//   showTooltip({ title, lines: [text], contribution?, value? }, clientX, clientY)
//   hideTooltip()
//   tooltipText(info) -> one line for an aria-live readout
// data-testid="tooltip"; placed with a CSS transform so it never leaves the viewport.
let el;

function element() {
  if (!el) {
    el = document.createElement('div');
    el.className = 'tooltip';
    el.dataset.testid = 'tooltip';
    el.setAttribute('role', 'tooltip');
    el.hidden = true;
    document.body.append(el);
  }
  return el;
}

/** Shows `info` ({ title, lines, contribution? }) next to a viewport point. */
export function showTooltip(info, x, y) {
  const tip = element();
  const title = document.createElement('div');
  title.className = 'tt-title';
  title.textContent = info.title;
  const body = info.lines.map((line) => Object.assign(document.createElement('div'), { className: 'tt-line', textContent: line }));
  if (info.contribution) body.push(Object.assign(document.createElement('div'), { className: 'tt-contrib', textContent: info.contribution }));
  tip.replaceChildren(title, ...body);
  tip.dataset.value = String(info.value);
  tip.hidden = false;
  const w = tip.offsetWidth;
  const h = tip.offsetHeight;
  const left = x + 14 + w > innerWidth - 4 ? Math.max(4, x - 14 - w) : x + 14;
  const top = y + 14 + h > innerHeight - 4 ? Math.max(4, y - 14 - h) : y + 14;
  tip.style.transform = `translate(${Math.round(left)}px, ${Math.round(top)}px)`;
}

export function hideTooltip() {
  element().hidden = true;
}

/** The tooltip's text as one line (for aria readouts). */
export const tooltipText = (info) => [info.title, ...info.lines, info.contribution ?? ''].join('. ').trim();
