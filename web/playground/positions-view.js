// The "Positions and order" card of the self-attention view: what the chosen
// kind of position adds to the enlarged head's scores (a heatmap of the scores
// with positions minus without), and the "Permute tokens" demonstration: the
// tokens are reordered, and the text, a table (every kind) and a heatmap of
// α′(i, j) − α(π(i), π(j)) say whether the weights only moved with their tokens.
// Every sentence is written from the numbers. Draws from the state and the steps.
import { h, setHidden, setText } from '../ui/dom.js';
import { fixed, num } from '../ui/format.js';
import { createHeatmap } from '../ui/heatmap.js';
import { SAME, permutation, permuted } from '../ui/permutation.js';
import { permutationReport } from './permute.js';
import { POSITION_NAMES, alibiSlope, alibiSlopes } from '../ui/positions.js';

const ABOUT = {
  none: 'No positions (the tutorial’s self-attention): nothing in the scores depends on where a token is.',
  sinusoidal: 'Sinusoidal (Vaswani et al. 2017): each embedding gets P(i, 2k) = sin(i / 10000^(2k/d)), P(i, 2k+1) = cos(…) added before the projections, so every score gains cross terms of token and position.',
  rope: 'RoPE (Su et al. 2021): each head’s q and k are rotated pair by pair by the angle i·θₖ, θₖ = 10000^(−2k/dₕ), so q·k depends on the two vectors and on the offset i − j only (an odd dₕ leaves its last dimension unrotated).',
};

/**
 * ALiBi's note for `heads` heads: Press et al.'s rule for the slopes, what the playground does
 * with fewer than 8 heads, and the slopes it computes here (alibiSlopes), head 0 first.
 */
export function alibiAbout(heads) {
  const list = alibiSlopes(heads).map((m) => num(m)).join(', ');
  return 'ALiBi (Press et al. 2022): each head adds −m·|i − j| to its scores (−m·(i − j) under the causal mask), a penalty growing with distance, '
    + 'with its own slope m. Press et al. give head h of H (h = 1 … H) the slope m = 2^(−8h/H): with 8 heads ½, ¼, …, 1/256, each half the one before; '
    + 'with 16 heads each is 1/√2 of the one before. The playground follows that rule for 8 heads or more; fewer heads take the first slopes of the '
    + `8-head set, so that one head’s bias shows on a few tokens. Here, ${heads === 1 ? 'one head: m =' : `${heads} heads (0 to ${heads - 1}): m =`} ${list}.`;
}

const sameList = (a, b) => a.length === b.length && a.every((v, i) => (Array.isArray(v) ? sameList(v, b[i]) : v === b[i]));

/** opts: onPermute(perm) reorders the store's tokens. */
export function createPositionsView(engine, opts) {
  const about = h('p', { className: 'step-note', dataset: { testid: 'positions-about' } });
  const termMap = createHeatmap({ id: 'position-term', label: 'What positions add to the scores', axes: 'query ↓ key →' });
  const termCaption = h('p', { className: 'step-note', dataset: { testid: 'position-term-caption' } });
  const termBox = h('div', { className: 'pos-figure' }, h('h3', { textContent: 'What positions add to the scores' }), termMap.el, termCaption);

  const button = h('button', { type: 'button', className: 'primary', textContent: 'Permute tokens', dataset: { testid: 'permute' } });
  const result = h('p', { className: 'permute-result', dataset: { testid: 'permute-result' }, attrs: { 'aria-live': 'polite' } },
    'Press Permute tokens to shuffle the tokens (each keeps its vector) and see whether the weights only move with them.');
  const tbody = h('tbody');
  const table = h('table', { className: 'permute-table', hidden: true, dataset: { testid: 'permute-table' } },
    h('caption', { textContent: 'The same shuffle under every kind of position: the largest |α′(i, j) − α(π(i), π(j))| over every head’s cells' }),
    h('thead', {}, h('tr', {}, ...['positions', 'largest change', 'cells changed', 'weights'].map((t) => h('th', { scope: 'col', textContent: t })))),
    tbody);
  const gapMap = createHeatmap({ id: 'permute-gap', label: 'The weights after the shuffle minus the weights before, moved with the tokens', axes: 'query ↓ key →' });
  const gapCaption = h('p', { className: 'step-note' });
  const gapBox = h('div', { className: 'pos-figure', hidden: true }, h('h3', { textContent: 'α′(i, j) − α(π(i), π(j))' }), gapMap.el, gapCaption);
  const el = h('section', { id: 'step-positions', className: 'card positions-card', dataset: { testid: 'positions-card' }, attrs: { tabindex: '-1', 'aria-labelledby': 'h-positions' } },
    h('h2', { id: 'h-positions', textContent: 'Positions and order' }), about,
    h('div', { className: 'pos-grid' }, termBox, h('div', { className: 'pos-permute' }, button, result, table, gapBox)));

  let shuffles = 0;
  let last = null; // { perm, old: { tokens, x }, now: { tokens, x } } while the tokens stay as the shuffle left them
  button.addEventListener('click', () => {
    const s = opts.state();
    const perm = permutation(s.tokens.length, ++shuffles);
    const old = { tokens: [...s.tokens], x: s.x.map((r) => [...r]) };
    last = { perm, old, now: permuted(old, perm) };
    opts.onPermute(last.now);
  });

  function showPermutation(s, r) {
    const { perm, old } = last;
    const head = s.head;
    const before = permutationReport(engine, s, old, perm);
    const here = before.find((k) => k.kind === s.positions);
    const diff = here.diffs[head];
    const moved = perm.map((k) => old.tokens[k]).join(' ');
    const name = POSITION_NAMES[s.positions];
    let text = `Shuffled “${old.tokens.join(' ')}” into “${moved}” (new token i is old token π(i): π = ${perm.join(', ')}, positions from 0). `;
    if (here.max <= SAME) {
      text += `With ${name} every weight moved with its tokens: α′(i, j) = α(π(i), π(j)) in all ${here.cells} cells (largest difference ${fixed(here.max, 4)}), rows and columns permuted together and nothing else changed. Self-attention alone does not see the order.`;
    } else {
      text += `With ${name} the weights did not only move: ${here.changed} of ${here.cells} cells differ from the old weights moved with the tokens, by up to ${fixed(here.max, 4)}.`;
      text += s.positions === 'none'
        ? ' The causal mask is itself positional: a token now sees other tokens before it.'
        : ' Where a token sits now changes what it attends to.';
    }
    setText(result, text);
    tbody.replaceChildren(...before.map((k) => h('tr', { className: k.kind === s.positions ? 'current' : '', dataset: { kind: k.kind } },
      h('th', { scope: 'row', textContent: POSITION_NAMES[k.kind] }), h('td', { textContent: fixed(k.max, 4) }),
      h('td', { textContent: `${k.changed} of ${k.cells}` }), h('td', { textContent: k.max <= SAME ? 'only moved' : 'changed' }))));
    setHidden(table, false);
    setHidden(gapBox, false);
    const n = s.tokens.length;
    gapMap.update(diff, {
      rowLabels: s.tokens, colLabels: s.tokens, kind: 'signed', legend: 'α′ − moved α (0: only moved)',
      describe: (i, j) => ({ title: `${s.tokens[i]} → ${s.tokens[j]}`, value: diff.data[i * n + j], lines: [`α′(${i}, ${j}) − α(${perm[i]}, ${perm[j]}) = ${fixed(diff.data[i * n + j], 4)}`] }),
    });
    let top = 0;
    for (const v of diff.data) top = Math.max(top, Math.abs(v));
    setText(gapCaption, `Head ${head}: the weights after the shuffle minus the weights before, moved with the tokens. All zero (white) means the shuffle only moved them; the largest |difference| here is ${fixed(top, 4)}.`);
  }

  return {
    el,
    update(s, r) {
      const self = s.mode === 'self' && r;
      setHidden(el, !self);
      if (!self) return;
      setText(about, s.positions === 'alibi' ? alibiAbout(s.heads) : ABOUT[s.positions]);
      const head = s.head;
      setHidden(termBox, s.positions === 'none');
      if (r.term) {
        const t = r.term[head];
        const n = s.tokens.length;
        let lo = Infinity;
        let hi = -Infinity;
        for (const v of t.data) if (v !== -Infinity) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
        termMap.update(t, {
          rowLabels: s.tokens, colLabels: s.tokens, kind: 'signed', legend: 'score with positions − without',
          describe: (i, j) => ({ title: `${s.tokens[i]} → ${s.tokens[j]}`, value: t.data[i * n + j], lines: [`added to e${i},${j}: ${fixed(t.data[i * n + j], 4)}`] }),
        });
        const what = s.positions === 'alibi' ? `the bias −m·|i − j| with slope m = ${num(alibiSlope(head, s.heads))}` : 'the scores with positions minus the scores without';
        setText(termCaption, `Head ${head}${s.heads > 1 ? ` of ${s.heads}` : ''}: ${what}, from ${fixed(lo, 3)} to ${fixed(hi, 3)}. Red raises a score, blue lowers it.`);
      }
      if (last && !sameList(s.tokens, last.now.tokens)) last = null;
      if (last && !sameList(s.x, last.now.x)) last = null;
      setHidden(table, !last);
      setHidden(gapBox, !last);
      if (last) showPermutation(s, r);
      else if (shuffles) setText(result, 'The tokens changed since the shuffle: press Permute tokens again to compare.');
    },
  };
}
