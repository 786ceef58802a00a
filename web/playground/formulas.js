// Shows a step's equation: looks its TeX parts up in the table rendered by KaTeX at
// build time (web/vendor/formulas.js, made by scripts/vendor.mjs from tex.js), so the
// page ships HTML and a stylesheet, not KaTeX's JavaScript, and needs no inline styles.
import { FORMULAS } from '../vendor/formulas.js';
import { h } from '../ui/dom.js';
import { formulaKey, texParts } from './tex.js';

/** Renders the equation of `step` under state s into el, unless it already shows it. */
export function renderFormula(el, step, s) {
  const parts = texParts(step, formulaKey(s));
  const key = parts.join('\n');
  if (el.dataset.tex === key) return;
  el.dataset.tex = key;
  el.replaceChildren(...parts.map((tex) => {
    const span = h('span', { className: 'formula-part' });
    const html = FORMULAS[tex];
    // trusted: generated at build time by KaTeX from the finite set in tex.js
    if (html) span.innerHTML = html;
    else span.textContent = tex;
    return span;
  }));
}
