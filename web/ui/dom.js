// The element helper every page uses (no innerHTML anywhere: text is always text).
//   h(tag, props, ...children)   a new element; props are assigned as properties
//                                (className, textContent, type, ...); `dataset`,
//                                `style` (an object) and `attrs` (setAttribute) are merged
//   svg(tag, attrs, ...children) a new SVG element; attrs go through setAttribute
//   byId(id)                     document.getElementById
//   setText(node, text)          writes textContent only when it changes (no relayout otherwise)
//   setHidden(node, hidden)      sets .hidden only when it changes (writing the same value still
//                                invalidates the element's style)

/** A new HTML element. */
export function h(tag, props = {}, ...children) {
  const { dataset, style, attrs, ...rest } = props;
  const node = Object.assign(document.createElement(tag), rest);
  if (dataset) Object.assign(node.dataset, dataset);
  if (style) Object.assign(node.style, style);
  if (attrs) for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  node.append(...children);
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** A new SVG element. */
export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  node.append(...children);
  return node;
}

export const byId = (id) => document.getElementById(id);

/** Sets textContent unless it already reads `text`. */
export function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/** Sets node.hidden unless it already is `hidden`. */
export function setHidden(node, hidden) {
  if (node.hidden !== hidden) node.hidden = hidden;
}
