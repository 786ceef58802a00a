// The logit lens: what each layer's residual stream would predict if the model
// stopped there (read through the final LayerNorm and the output layer), as a
// table of each layer's top next token per position, then the model's own top
// prediction with its probability, under the input's tokens and the token that
// actually comes next. A guess that matches the next token is marked, and so
// are the positions training scores (●), when they are known. The table is
// compact (a probability as .99), so a laptop shows a default model's whole
// context; a narrower screen opens it scrolled to the scored positions.
import { byId, h } from '../ui/dom.js';
import { fixed } from '../ui/format.js';

/** A token as a table cell shows it: spaces and line ends made visible. */
export const shown = (t) => (t === ' ' ? '␣' : t === '\n' ? '↵' : t === '\t' ? '⇥' : t);

/** A probability in three characters (.99, 1.0): the table's narrowest column is as wide as its widest number. */
const probability = (p) => (p >= 0.995 ? '1.0' : fixed(p, 2).slice(1));

/** box: where the table goes (the lab's trained model's by default). */
export function createLensView({ box = byId('tf-lens') } = {}) {
  // where the table was last scrolled to show its scored positions: a reader's own scroll differs, and stays
  let shownAt = 0;

  /** Scrolls a table wider than its box so the first scored position sits just after the (sticky) row names. */
  function showScored(table) {
    if (box.scrollLeft !== shownAt) return;
    const first = table.querySelector('th.scored');
    const names = table.querySelector('th[scope=row]');
    const past = first && names ? first.getBoundingClientRect().left - table.getBoundingClientRect().left - names.offsetWidth : 0;
    box.scrollLeft = table.offsetWidth > box.clientWidth ? Math.max(0, past) : 0;
    shownAt = box.scrollLeft;
  }

  const cell = (tag, text, next, extra = {}) => h(tag, {
    textContent: shown(text ?? ''), className: next !== undefined && text === next ? 'hit' : '', ...extra,
  });

  return {
    /** Draws inspect()'s { tokens, lens, predictions }, or says why there is nothing; `scored`: the positions training scores (a Set), if known. */
    update(view, scored = null) {
      if (!view) {
        box.replaceChildren(h('p', { className: 'hint', textContent: 'Nothing to read yet: the model reads the input once it is made.' }));
        return;
      }
      const { tokens, lens, predictions } = view;
      const next = (t) => tokens[t + 1];
      const position = (t) => (scored?.has(t)
        ? h('th', { scope: 'col', className: 'scored', title: 'scored: training checks what this position predicts' }, `●${t}`, h('span', { className: 'sr-only', textContent: ' (scored)' }))
        : h('th', { scope: 'col', textContent: String(t) }));
      const head = h('tr', {}, h('th', { scope: 'col', textContent: 'position' }), ...tokens.map((_, t) => position(t)));
      const row = (label, cells) => h('tr', {}, h('th', { scope: 'row', textContent: label }), ...cells);
      const rows = [
        row('input', tokens.map((t) => cell('td', t))),
        row('next', tokens.map((_, t) => cell('td', next(t) ?? '–'))),
        ...lens.map((guesses, layer) => row(`after layer ${layer}`, guesses.map((g, t) => cell('td', g?.token ?? g, next(t))))),
        row('output', predictions.map((p, t) => cell('td', p[0]?.token, next(t), { title: p.map((q) => `${q.token} ${fixed(q.p, 2)}`).join(', ') }))),
        row('p', predictions.map((p) => h('td', { className: 'p', textContent: p[0] ? probability(p[0].p) : '', title: p[0] ? fixed(p[0].p, 4) : '' }))),
      ];
      const table = h('table', { className: 'tf-lens', dataset: { testid: 'tf-lens-table' } },
        h('caption', { className: 'sr-only', textContent: 'Logit lens: each layer’s top next-token guess per position' }),
        h('thead', {}, head), h('tbody', {}, ...rows));
      box.replaceChildren(table);
      showScored(table);
    },
  };
}
