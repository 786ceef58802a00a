// Chapter 5, self-attention: every token is a query over the same sequence.
// Without weights (Q = K = V = X, the tutorial's 6 × 6 matrix), then with
// trainable Wq, Wk, Wv (seeded example values), the causal mask, and 1 or 3
// heads, each head's weights drawn. All from engine.selfAttention.
import { h, setText } from '../ui/dom.js';
import { MASKED_WEIGHTS, causalMasked, createHeatmap } from '../ui/heatmap.js';
import { fixed } from '../ui/format.js';
import { createChallenge } from './progress.js';
import { playgroundLink } from './links.js';
import { quote } from './numbers.js';
import { randomMatrix } from './rng.js';
import { TOKENS, X } from './tutorial.js';

/** Which of the 3 dimensions head k of 3 reads (heads are counted from 0, as on every page; dimensions by name). */
const DIMENSIONS = ['first', 'second', 'third'];
/** The challenge: the query “step” (row 5) looking most at “starts” (key 2). */
const STEP = 5;
const STARTS = 2;

/** Example projections (d × d, row-vector convention Q = X·Wq), from seed 2. */
export function exampleProjections() {
  return { wq: randomMatrix(2, 'wq', 3, 3), wk: randomMatrix(2, 'wk', 3, 3), wv: randomMatrix(2, 'wv', 3, 3) };
}

/** The chapter's engine call for its settings. */
export function selfAttend(engine, { trainable, causal, heads }) {
  const w = exampleProjections();
  return engine.selfAttention({
    x: X, heads, causal, score: trainable ? 'scaled_dot' : 'dot', ...(trainable ? w : {}),
  });
}

export function mountSelf(root, { engine }) {
  const w = exampleProjections();
  const base = selfAttend(engine, { trainable: false, causal: false, heads: 1 });
  quote('ch5.journeyStep', base.weights[0].data[1 * 6 + 5], fixed(base.weights[0].data[1 * 6 + 5], 4));
  const showMatrix = (name, m) => {
    const table = root.querySelector(`[data-role=${name}]`);
    table.replaceChildren(...m.map((r) => h('tr', {}, ...r.map((v) => h('td', { textContent: fixed(v, 2) })))));
  };
  showMatrix('wq', w.wq);
  showMatrix('wk', w.wk);
  showMatrix('wv', w.wv);

  const trainable = root.querySelector('[data-role=trainable]');
  const causal = root.querySelector('[data-role=causal]');
  const headsSel = root.querySelector('[data-role=heads]');
  const headsHost = root.querySelector('[data-role=heads-maps]');
  const ctxHost = root.querySelector('[data-role=context]');
  const weightsBox = root.querySelector('[data-role=projections]');
  const link = root.querySelector('[data-role=open-playground]');
  const ctxMap = createHeatmap({ id: 'ch5-context', label: 'Context vectors z, one row per token', axes: 'token ↓ dim →' });
  ctxHost.append(ctxMap.el);
  const maps = [];
  const challenge = createChallenge(root.querySelector('[data-role=challenge]'), 'self',
    'Find settings under which “step” puts the most weight on “starts” in at least one head.');

  function update() {
    const s = { trainable: trainable.checked, causal: causal.checked, heads: Number(headsSel.value) };
    const r = selfAttend(engine, s);
    weightsBox.hidden = !s.trainable;
    while (maps.length < s.heads) {
      const k = maps.length;
      const hm = createHeatmap({ id: `ch5-head-${k}`, label: `Head ${k}: attention weights`, axes: 'query ↓ key →' });
      const fig = h('div', { className: 'head-map' }, h('h4', { textContent: `head ${k}` }), hm.el);
      maps.push({ hm, fig });
      headsHost.append(fig);
    }
    let solved = false;
    const looks = []; // per head shown: where “step” looks most, and how much it gives “starts”
    maps.forEach((m, k) => {
      m.fig.hidden = k >= s.heads;
      if (k >= s.heads) return;
      const wts = r.weights[k];
      m.fig.querySelector('h4').textContent = s.heads > 1 ? `head ${k} (the ${DIMENSIONS[k]} dimension)` : 'weights α';
      m.hm.update(s.causal ? causalMasked(wts) : wts, {
        rowLabels: TOKENS, colLabels: TOKENS, kind: 'weights', legend: 'α', maxCell: 48, masked: MASKED_WEIGHTS,
        describe: (i, j) => ({ title: `${TOKENS[i]} → ${TOKENS[j]}`, lines: [`α = ${fixed(wts.data[i * 6 + j], 4)}`] }),
      });
      const row = wts.data.subarray(STEP * 6, STEP * 6 + 6);
      let best = 0;
      for (let j = 1; j < 6; j++) if (row[j] > row[best]) best = j;
      if (best === STARTS) solved = true;
      looks.push(`${s.heads > 1 ? `in head ${k} ` : ''}at “${TOKENS[best]}” (α ${fixed(row[best], 2)}; “${TOKENS[STARTS]}” ${fixed(row[STARTS], 2)})`);
    });
    ctxMap.update(r.context, { rowLabels: TOKENS, colLabels: Array.from({ length: r.context.cols }, (_, j) => `z${j + 1}`), kind: 'signed', legend: 'context value', maxCell: 48 });
    root.dataset.solvedHead = String(solved);
    link.href = playgroundLink({
      preset: 'tutorial', mode: 'self', score: s.trainable ? 'scaled_dot' : 'dot', trainable: s.trainable,
      mask: s.causal ? 'causal' : 'none', heads: s.heads, head: 0, paramSeed: 2, ...w,
    });
    challenge.check(solved, `“${TOKENS[STEP]}” looks most ${looks.join('; ')}. Change the settings above.`);
  }
  for (const el of [trainable, causal, headsSel]) el.addEventListener('change', update);
  update();
}
