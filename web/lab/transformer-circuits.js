// The Transformer family's Circuits panel: which parts of a model carry an
// answer, for the model trained here and for an opened checkpoint (GPT-2,
// Pythia). A clean and a corrupt prompt of the same length, their tokens shown
// and their lengths checked as they are typed; the answer pair (a, b), suggested
// from the prompts (each one's top next token), and the metric logit[a] − logit[b]
// on both; activation patching of a chosen target (m.patch: layers × positions
// with the tokens as labels, or layers × heads), exact or by attribution where the
// engine has it, the two side by side on request with their agreement; the heads' composition scores
// (heads × heads, Q, K or V, with the strongest pairs listed) and copying scores
// (layers × heads); the logit attribution as bars, and the accumulated residual's
// logit difference layer by layer, when the engine has it (the worker's `methods`). A head's
// cell pressed shows that head's attention on the clean prompt. Every model call
// runs in the lab's worker; each result says which model and prompts it is of,
// and is marked when they change. The prompts, the answer and the target are the
// link's tfClean, tfCorrupt, tfAnswer, tfOther and tfTarget ('' : the model's
// example pair and the suggested answer), controls of the lab's form by their ids.
import { byId, h, setHidden, setText } from '../ui/dom.js';
import { fixed } from '../ui/format.js';
import { createHeatmap } from '../ui/heatmap.js';
import { tokenLabel } from '../ui/gpt2-reading.js';
import { PATCH_TARGETS, headName } from './transformer-state.js';

/**
 * The indirect-object prompts of Wang et al. 2022 ("Interpretability in the Wild"), as
 * TransformerLens's demo writes them: 4 templates × 2 name orders. The corrupt prompt
 * names the other person in the second clause, so its answer flips; the pair keeps
 * the clean answer (the indirect object) against the subject.
 */
const IOI_TEMPLATES = [
  ['When John and Mary went to the shops,{} gave the bag to', ' John', ' Mary'],
  ['When Tom and James went to the park,{} gave the ball to', ' Tom', ' James'],
  ['When Dan and Sid went to the shops,{} gave an apple to', ' Dan', ' Sid'],
  ['After Martin and Amy went to the park,{} gave a drink to', ' Martin', ' Amy'],
];
export const IOI_PROMPTS = IOI_TEMPLATES.flatMap(([t, x, y]) => [[x, y], [y, x]].map(([subject, io]) => ({
  clean: t.replace('{}', subject), corrupt: t.replace('{}', io), answer: io, other: subject,
})));

/** The trained induction model's example: "d r i v … d r i" predicts v (the token after the earlier i); the corrupt has j there. */
export const INDUCTION_PAIR = { clean: 'drivamfdri', corrupt: 'drijamfdri' };

/** Each patching target (PATCH_TARGETS) in words. */
const TARGETS = {
  resid: 'residual stream (block input) at each position',
  attn: 'attention output at each position',
  mlp: 'MLP output at each position',
  heads: 'each head\'s output',
  'head-values': 'each head\'s values',
  'head-patterns': 'each head\'s attention pattern',
};
const BY_POSITION = new Set(PATCH_TARGETS.slice(0, 3));
/** Past this many parameters a model's analyses wait for Run (GPT-2 small's heads take seconds); smaller ones run at once. A checkpoint's always wait: its other panels read it first, in the same worker. */
const AUTO_MAX = 2e6;
/** The strongest composition pairs listed. */
const TOP_PAIRS = 6;

let panel = null;
/** The one Circuits panel of the page (the trained model's view and the checkpoint's both hand it their model). */
export function circuitsPanel(client) {
  panel ??= createCircuitsView(client);
  return panel;
}

/** A probability, in two decimals or, below 0.01, two significant digits. */
const prob = (p) => (p >= 0.01 ? fixed(p, 2) : p.toPrecision(2));
const sameIds = (a, b) => a && b && a.length === b.length && a.every((x, i) => x === b[i]);

function createCircuitsView(client) {
  const card = byId('tf-circuits');
  const fields = { clean: byId('tfClean'), corrupt: byId('tfCorrupt'), answer: byId('tfAnswer'), other: byId('tfOther') };
  const target = byId('tfTarget');
  const method = byId('cx-method');
  const compare = byId('cx-compare');
  const picker = byId('cx-ioi');
  const run = byId('cx-run');
  const sourceBox = byId('cx-source');
  const el = (id) => byId(`cx-${id}`);

  const patchMap = createHeatmap({ id: 'cx-patch', label: 'Activation patching: the share of the clean answer each activation restores', uprightCols: true });
  el('patch-map').append(patchMap.el);
  const attrMap = createHeatmap({ id: 'cx-patch-attribution', label: 'Attribution patching beside exact: the gradient\'s estimate of each share', uprightCols: true });
  el('compare-map').append(attrMap.el);
  setHidden(attrMap.el, true);
  const compMap = createHeatmap({ id: 'cx-composition', label: 'Composition scores: earlier head (row) into later head (column)', axes: 'earlier ↓ later →' });
  el('composition-map').append(compMap.el);
  const copyMap = createHeatmap({ id: 'cx-copying', label: 'Copying scores of every head', axes: 'layer ↓ head →', uprightCols: true });
  el('copying-map').append(copyMap.el);
  const headMap = createHeatmap({ id: 'cx-head', label: 'The chosen head\'s attention on the clean prompt', uprightCols: true });
  el('head-map').append(headMap.el);

  const sources = new Map(); // 'trained' | 'checkpoint' -> { kind, model, config, label, pair: { clean, corrupt } }
  let current = null;
  let methods = []; // the worker's methods for the model in hand (logitAttribution when the engine has it)
  let read = null; // the prompts as read: { clean, corrupt, cleanIds, corruptIds, tokens, corruptTokens, a, b: { id, token } } (null: unreadable)
  const shown = { patch: null, weights: null }; // what each result is of (its key), to mark it when that changes
  let ticket = 0;
  const attributionChecked = new Set(); // models whose engine was asked whether attribution patching exists
  let composition = null;

  const src = () => sources.get(current);
  const call = (action, args = {}) => client.call(action, { model: src().model, ...args });
  const labelOf = tokenLabel;
  const small = () => current !== 'checkpoint' && (src()?.config.parameters ?? Infinity) <= AUTO_MAX;

  /** A long computation's line: what runs, and after a second the seconds it has taken. */
  function busy(node, text) {
    const started = performance.now();
    setText(node, text);
    node.dataset.busy = 'true';
    const timer = setInterval(() => {
      const s = (performance.now() - started) / 1000;
      if (s >= 1) setText(node, `${text} ${Math.floor(s)} s…`);
    }, 250);
    return () => {
      clearInterval(timer);
      delete node.dataset.busy;
      // the line said what ran; once done it says how long it took (a later line of its own stays)
      if (node.textContent.startsWith(text)) setText(node, `Done in ${fixed((performance.now() - started) / 1000, 1)} s.`);
    };
  }

  /** The prompt of a field: its text, or the model's example when it is empty. */
  const promptOf = (name) => fields[name].value || src()?.pair[name] || '';

  function say(node, text, kind = 'info') {
    setText(node, text ?? '');
    setHidden(node, !text);
    node.dataset.kind = kind;
  }

  /**
   * Reads both prompts and the answer as the model's tokens: the lengths checked (a mismatch
   * said inline), the answer pair suggested from each prompt's top next token when not typed.
   * Returns the reading, or null with what is wrong said.
   */
  async function readPrompts() {
    const mine = ++ticket;
    const s = src();
    if (!s) return null;
    const clean = promptOf('clean');
    const corrupt = promptOf('corrupt');
    for (const name of ['clean', 'corrupt']) fields[name].placeholder = s.pair[name];
    const problems = [];
    const toks = {};
    for (const [name, text] of [['clean', clean], ['corrupt', corrupt]]) {
      try {
        toks[name] = await call('tokenize', { text });
      } catch (err) {
        problems.push(`The ${name} prompt cannot be read: ${String(err.message).replace(/^tokenize: /, '')}.`);
      }
    }
    if (mine !== ticket) return undefined;
    for (const name of ['clean', 'corrupt']) {
      const t = toks[name];
      setText(el(`${name}-tokens`), t ? `${t.ids.length} tokens: ${t.tokens.map(labelOf).join(' · ')}` : '');
      if (t && t.ids.length > s.config.context) problems.push(`The ${name} prompt is ${t.ids.length} tokens; the model reads at most ${s.config.context}.`);
      if (t && t.ids.length < 2) problems.push(`The ${name} prompt needs at least two tokens.`);
    }
    if (toks.clean && toks.corrupt && toks.clean.ids.length !== toks.corrupt.ids.length) {
      const d = toks.corrupt.ids.length - toks.clean.ids.length;
      problems.push(`The corrupt prompt has ${Math.abs(d)} token${Math.abs(d) === 1 ? '' : 's'} ${d > 0 ? 'more' : 'fewer'} than the clean one `
        + `(${toks.corrupt.ids.length} against ${toks.clean.ids.length}): patching puts activations back position by position, so both need the same length.`);
    }
    if (toks.clean && toks.corrupt && sameIds(toks.clean.ids, toks.corrupt.ids)) problems.push('The two prompts are the same tokens: there is nothing to patch.');
    if (problems.length) {
      say(el('prompt-message'), problems.join(' '), 'error');
      setText(el('suggested'), '');
      setText(el('pair'), '');
      return null;
    }
    say(el('prompt-message'), null);
    // the answer pair: typed, or each prompt's top next token (the clean one's second when they agree)
    const [cv, kv] = await Promise.all([toks.clean, toks.corrupt].map((t) => call('inspect', { input: { ids: t.ids }, options: { ablate: [], lens: false } })));
    if (mine !== ticket) return undefined;
    const top = (v) => v.predictions.at(-1);
    const [c0, c1] = top(cv);
    const k0 = top(kv)[0];
    const suggested = { answer: c0, other: k0.id !== c0.id ? k0 : c1 };
    setText(el('suggested'), `Suggested from the prompts: the clean prompt's next token is ${labelOf(c0.token)} (p ${prob(c0.p)}), `
      + `the corrupt one's ${labelOf(k0.token)} (p ${prob(k0.p)})${k0.id === c0.id ? `; they agree, so b is the clean one's second, ${labelOf(c1.token)}` : ''}.`);
    const answer = {};
    for (const name of ['answer', 'other']) {
      fields[name].placeholder = suggested[name].token;
      const typed = fields[name].value;
      if (!typed) {
        answer[name] = { id: suggested[name].id, token: suggested[name].token };
        continue;
      }
      const t = await call('tokenize', { text: typed }).catch((err) => ({ error: err }));
      if (mine !== ticket) return undefined;
      if (t.error || t.ids.length !== 1) {
        problems.push(t.error ? `The answer ${name === 'answer' ? 'a' : 'b'} cannot be read: ${String(t.error.message).replace(/^tokenize: /, '')}.`
          : `The answer ${name === 'answer' ? 'a' : 'b'}, “${typed}”, is ${t.ids.length} tokens (${t.tokens.map(labelOf).join(' · ')}); it must be one.`);
      } else answer[name] = { id: t.ids[0], token: t.tokens[0] };
    }
    if (!problems.length && answer.answer.id === answer.other.id) problems.push('The answers a and b are the same token: their logit difference is 0 on every run.');
    if (problems.length) {
      say(el('answer-message'), problems.join(' '), 'error');
      return null;
    }
    say(el('answer-message'), null);
    setText(el('pair'), `a = ${labelOf(answer.answer.token)} (id ${answer.answer.id}), b = ${labelOf(answer.other.token)} (id ${answer.other.id})`);
    return {
      clean, corrupt, cleanIds: toks.clean.ids, corruptIds: toks.corrupt.ids, tokens: toks.clean.tokens, corruptTokens: toks.corrupt.tokens,
      a: answer.answer, b: answer.other,
    };
  }

  /** What a patching result is of: the model, its steps, the prompts, the answer, the target and the method. */
  const patchKey = (r) => JSON.stringify([current, src()?.model, src()?.steps, r?.cleanIds, r?.corruptIds, r?.a.id, r?.b.id, target.value, method.value, compare.checked]);
  const weightsKey = () => JSON.stringify([current, src()?.model, src()?.steps]);

  /** Marks each result whose model, prompts or choices changed since it was computed (or unmarks it). */
  function markStale() {
    const patchStale = shown.patch !== null && shown.patch !== patchKey(read);
    card.querySelector('.cx-patch').dataset.stale = String(patchStale);
    setHidden(el('patch-stale'), !patchStale);
    const weightsStale = shown.weights !== null && shown.weights !== weightsKey();
    card.querySelector('.cx-weights').dataset.stale = String(weightsStale);
    setHidden(el('weights-stale'), !weightsStale);
    // the head shown large is of the clean prompt and model it names: dimmed once either changes
    const head = el('head-map');
    if (head.dataset.key) head.dataset.stale = String(head.dataset.key !== JSON.stringify([current, src()?.model, src()?.steps, read?.cleanIds]));
  }

  const positionLabels = (r) => r.tokens.map((t, p) => `${p} ${labelOf(t)}`);
  const layerLabels = (n) => Array.from({ length: n }, (_, l) => `L${l}`);
  const headLabels = (n) => Array.from({ length: n }, (_, k) => `H${k}`);
  const describeOf = (s) => `${s.label}: clean “${read.clean}”, corrupt “${read.corrupt}”, a ${labelOf(read.a.token)}, b ${labelOf(read.b.token)}`;

  /** A patching result drawn in `hm`: layers × positions (the tokens as labels) or layers × heads. */
  function drawPatch(hm, p, r) {
    const byPosition = BY_POSITION.has(p.target);
    const cols = byPosition ? positionLabels(r) : headLabels(src().config.heads);
    hm.update({ rows: p.rows, cols: p.cols, data: p.data }, {
      rowLabels: layerLabels(p.rows), colLabels: cols, kind: 'signed', maxCell: byPosition ? 40 : 30, everyLabel: true,
      legend: `share of the clean answer restored (${p.method}${hm === attrMap ? ', on its own colour scale' : ''}): 1 = all of it, 0 = none`,
      describe: (i, j) => ({
        title: byPosition ? `L${i}, position ${j} (${labelOf(r.tokens[j])})` : `L${i}H${j}`,
        lines: [`restores ${fixed(p.data[i * p.cols + j], 3)} of the clean answer (${p.method})`],
      }),
      onHover: (i, j) => { hm.el.dataset.cell = i === null ? '' : `${i},${j}`; },
    });
    hm.el.dataset.heads = String(!byPosition);
    hm.el.dataset.values = Array.from(p.data, (x) => x.toFixed(4)).join(',');
    setHidden(hm.el, false);
  }

  /** A cell of a patching result in words: "L1, position 3 (v)" or "L1H0". */
  const cellName = (p, r, k) => {
    const [i, j] = [Math.floor(k / p.cols), k % p.cols];
    return BY_POSITION.has(p.target) ? `L${i}, position ${j} (${labelOf(r.tokens[j])})` : `L${i}H${j}`;
  };

  /** How far attribution patching agrees with exact on the same cells: Pearson's r, the largest cell of each, the largest gap. */
  function agreement(exact, approx, r) {
    const n = exact.data.length;
    const mean = (d) => d.reduce((a, b) => a + b, 0) / n;
    const [mx, my] = [mean(exact.data), mean(approx.data)];
    let sxy = 0, sxx = 0, syy = 0, gap = 0, at = 0;
    for (let k = 0; k < n; k++) {
      const [dx, dy] = [exact.data[k] - mx, approx.data[k] - my];
      sxy += dx * dy; sxx += dx * dx; syy += dy * dy;
      if (Math.abs(exact.data[k] - approx.data[k]) > gap) [gap, at] = [Math.abs(exact.data[k] - approx.data[k]), k];
    }
    const top = (d) => d.reduce((best, v, k) => (v > d[best] ? k : best), 0);
    const [te, ta] = [top(exact.data), top(approx.data)];
    // a cell tied with exact's largest (the same share to float32 rounding) is as much its largest
    const same = Math.abs(exact.data[ta] - exact.data[te]) <= 1e-3 * Math.max(1, Math.abs(exact.data[te]));
    const corr = sxx > 0 && syy > 0 ? `r = ${fixed(sxy / Math.sqrt(sxx * syy), 2)} over the ${n} cells` : `no correlation (a map is constant over its ${n} cells)`;
    return `Attribution against exact: ${corr}; the largest cell ${same ? `is the same, ${cellName(exact, r, ta)}` : `differs (exact: ${cellName(exact, r, te)}, attribution: ${cellName(exact, r, ta)})`}; `
      + `the largest gap ${fixed(gap, 2)}, at ${cellName(exact, r, at)}.`;
  }

  /** Attribution patching beside the exact result, when asked: its map and how far the two agree. */
  async function runCompare(options, exact, r, key) {
    const node = el('agreement');
    if (!compare.checked || exact.method !== 'exact') {
      setHidden(attrMap.el, true);
      setText(node, '');
      return;
    }
    try {
      const p = await call('patch', { options: { ...options, method: 'attribution' } });
      if (key !== patchKey(read)) return;
      drawPatch(attrMap, p, r);
      setText(node, agreement(exact, p, r));
    } catch (err) {
      setHidden(attrMap.el, true);
      setText(node, `No attribution beside it (${err.code}): ${err.message}`);
    }
  }

  async function runPatch(r) {
    const s = src();
    const done = busy(el('patch-status'), `Patching ${TARGETS[target.value]}: one forward pass per cell…`);
    const options = { clean: { ids: r.cleanIds }, corrupt: { ids: r.corruptIds }, answer: [r.a.id, r.b.id], target: target.value, method: method.value };
    const key = patchKey(r);
    try {
      const p = await call('patch', { options });
      if (key !== patchKey(read)) return;
      drawPatch(patchMap, p, r);
      setText(el('metric'), `Logit difference a − b at the last position: clean ${fixed(p.clean, 3)}, corrupt ${fixed(p.corrupt, 3)}.`);
      el('metric').dataset.clean = String(p.clean);
      el('metric').dataset.corrupt = String(p.corrupt);
      setText(el('patch-of'), `Of ${describeOf(s)}; target: ${TARGETS[p.target]}, ${p.method}.`);
      say(el('patch-error'), null);
      await runCompare(options, p, r, key);
      shown.patch = key;
    } catch (err) {
      if (key !== patchKey(read)) return;
      say(el('patch-error'), err.code === 'ERR_ARG' && /not built/.test(err.message)
        ? `Attribution patching is not in this engine yet (it says: ${err.message}). Choose exact.`
        : `Patching failed (${err.code}): ${err.message}`, 'error');
      setHidden(patchMap.el, true);
      setHidden(attrMap.el, true);
      setText(el('agreement'), '');
      shown.patch = null;
    } finally {
      done();
      markStale();
    }
    await checkAttribution(options, s);
  }

  /** Whether this engine patches by attribution: asked once per model, the choice disabled and said when it does not. */
  async function checkAttribution(options, s) {
    if (attributionChecked.has(s.model)) return;
    attributionChecked.add(s.model);
    const option = method.querySelector('option[value=attribution]');
    try {
      await call('patch', { options: { ...options, target: 'resid', method: 'attribution' } });
      option.disabled = false;
      option.textContent = 'attribution (gradient)';
    } catch (err) {
      const missing = err.code === 'ERR_ARG' && /not built/.test(err.message);
      option.disabled = missing;
      option.textContent = missing ? 'attribution (not in this engine yet)' : 'attribution (gradient)';
    }
    compare.disabled = option.disabled;
    if (compare.disabled) compare.checked = false;
    method.dataset.checked = 'true';
  }

  /**
   * The accumulated residual stream's a − b, layer by layer: the components written before each
   * block summed (the embeddings, then each layer's heads, attention bias and MLP), read through
   * the final LayerNorm at the last position's scale as the components are (TransformerLens's
   * accumulated_resid with apply_ln); the last sum and the biases after the stream make the logit difference.
   */
  function accumulated(components, layers) {
    // the embeddings before block 0, a block's parts after it; the biases after the stream (ln_f's, the output layer's) are not in it
    const layerOf = (name) => (/^L(\d+)[H.]/.exec(name)?.[1] ?? (name === 'embed' || name === 'pos' ? -1 : null));
    const sums = Array.from({ length: layers + 1 }, () => 0);
    for (const c of components) {
      const l = layerOf(c.name);
      if (l !== null) sums[Number(l) + 1] += c.value;
    }
    let total = 0;
    const steps = sums.map((v, k) => {
      total += v;
      return `${k === 0 ? 'the embeddings' : `after L${k - 1}`} ${fixed(total, 2)}`;
    });
    return `The residual stream's a − b, accumulated: ${steps.join(', ')}.`;
  }

  /** The logit attribution bars on the clean prompt, where the engine has the method; else the spot says it is not there. */
  async function runAttribution(r) {
    const box = el('attribution');
    if (!methods.includes('logitAttribution')) {
      box.replaceChildren();
      setText(el('accumulated'), '');
      setText(el('attribution-status'), 'Direct logit attribution (each component\'s share of a − b) is not in this engine yet: it shows here once the engine has it.');
      el('attribution-status').dataset.kind = 'missing';
      return;
    }
    const done = busy(el('attribution-status'), 'Attributing the logit difference…');
    try {
      const got = await call('logitAttribution', { options: { ids: r.cleanIds, answer: [r.a.id, r.b.id] } });
      const sorted = [...got.components].sort((x, y) => Math.abs(y.value) - Math.abs(x.value));
      const most = Math.max(1e-12, ...sorted.map((c) => Math.abs(c.value)));
      box.replaceChildren(...sorted.map((c) => h('div', { className: 'cx-bar', dataset: { name: c.name, value: String(c.value) } },
        h('span', { className: 'cx-bar-name', textContent: c.name }),
        h('span', { className: 'cx-bar-track' }, h('span', { className: `cx-bar-fill ${c.value < 0 ? 'neg' : 'pos'}`, style: { width: `${(50 * Math.abs(c.value)) / most}%` } })),
        h('span', { className: 'cx-bar-value', textContent: fixed(c.value, 3) }))));
      setText(el('attribution-status'), `Logit difference ${fixed(got.logitDiff, 3)} on the clean prompt, split into its ${got.components.length} components (largest first; blue adds to a, red to b).`);
      setText(el('accumulated'), accumulated(got.components, src().config.layers));
      el('attribution-status').dataset.kind = 'ok';
    } catch (err) {
      setText(el('attribution-status'), `The attribution failed (${err.code}): ${err.message}`);
      el('attribution-status').dataset.kind = 'error';
    } finally {
      done();
    }
  }

  /** The composition map of the chosen kind (q, k, v) and its strongest pairs. */
  function showComposition() {
    if (!composition) return;
    const { layers, heads } = src().config;
    const kind = el('qkv').value;
    const m = composition[kind];
    const names = Array.from({ length: layers * heads }, (_, k) => headName({ layer: Math.floor(k / heads), head: k % heads }));
    compMap.update(m, {
      rowLabels: names, colLabels: names, kind: 'unit', maxCell: 30, legend: `${kind.toUpperCase()}-composition score (0 to 1)`,
      describe: (i, j) => ({ title: `${names[i]} → ${names[j]}`, lines: [`${kind.toUpperCase()}-composition ${fixed(m.data[i * m.cols + j], 3)}`] }),
      onHover: (i, j) => { compMap.el.dataset.cell = i === null ? '' : names[j]; },
    });
    compMap.el.dataset.values = Array.from(m.data, (x) => x.toFixed(4)).join(',');
    const pairs = [];
    for (let i = 0; i < m.rows; i++) for (let j = 0; j < m.cols; j++) if (m.data[i * m.cols + j] > 0) pairs.push([m.data[i * m.cols + j], names[i], names[j]]);
    pairs.sort((x, y) => y[0] - x[0]);
    el('pairs').replaceChildren(...pairs.slice(0, TOP_PAIRS).map(([v, a, b]) => h('li', { textContent: `${a} → ${b}: ${fixed(v, 2)}` })));
    setText(el('pairs-none'), pairs.length ? '' : 'No pairs: composition needs heads in two layers.');
  }

  async function runWeights() {
    const s = src();
    const key = weightsKey();
    const done = busy(el('weights-status'), `Composition and copying scores of ${s.config.layers * s.config.heads} heads, from the weights…`);
    try {
      const [comp, copy] = [await call('compositionScores'), await call('copyingScores')];
      if (key !== weightsKey()) return;
      composition = comp;
      showComposition();
      const { layers, heads } = s.config;
      copyMap.update(copy, {
        rowLabels: layerLabels(layers), colLabels: headLabels(heads), kind: 'signed', maxCell: 30, everyLabel: true,
        legend: 'copying score (−1 suppresses what it attends to, 1 copies it)',
        describe: (i, j) => ({ title: `L${i}H${j}`, lines: [`copying ${fixed(copy.data[i * heads + j], 3)}`] }),
        onHover: (i, j) => { copyMap.el.dataset.cell = i === null ? '' : `L${i}H${j}`; },
      });
      copyMap.el.dataset.values = Array.from(copy.data, (x) => x.toFixed(4)).join(',');
      setText(el('weights-status'), `Of ${s.label}.`);
      shown.weights = key;
    } catch (err) {
      if (key === weightsKey()) setText(el('weights-status'), `The scores failed (${err.code}): ${err.message}`);
    } finally {
      done();
      markStale();
    }
  }

  /** Reads the prompts and runs what they feed: the patching, the attribution. */
  async function runPrompts() {
    const r = await readPrompts();
    if (r === undefined) return;
    read = r;
    markStale();
    if (!r) return;
    await runPatch(r);
    await runAttribution(r);
  }

  /** Everything, for the model in hand. */
  async function runAll() {
    run.disabled = true;
    try {
      await runPrompts();
      if (shown.weights !== weightsKey()) await runWeights();
    } finally {
      run.disabled = false;
    }
  }

  /** One head's attention on the clean prompt, large. */
  async function showHead(name) {
    const m = /^L(\d+)H(\d+)$/.exec(name ?? '');
    if (!m || !read) return;
    const [layer, head] = [Number(m[1]), Number(m[2])];
    try {
      const v = await call('inspect', { input: { ids: read.cleanIds }, options: { ablate: [], lens: false } });
      const map = v.attention[layer][head];
      const labels = v.tokens.map(labelOf);
      headMap.update(map, {
        rowLabels: labels, colLabels: labels, kind: 'unit', maxCell: 24, minCell: 11, everyLabel: true,
        legend: `attention weight of ${name} on the clean prompt: rows are queries ↓, columns keys →`,
        describe: (i, j) => ({ title: `${name}: ${i} (${labels[i]}) → ${j} (${labels[j]})`, lines: [`weight ${fixed(map.data[i * map.cols + j], 3)}`] }),
      });
      setHidden(headMap.el, false);
      el('head-map').dataset.head = name;
      el('head-map').dataset.key = JSON.stringify([current, src()?.model, src()?.steps, read?.cleanIds]);
      el('head-map').dataset.stale = 'false';
      setText(el('head-note'), `${name} on the clean prompt “${read.clean}”.`);
      el('head-map').scrollIntoView({ block: 'nearest' });
    } catch (err) {
      setText(el('head-note'), `That head could not be read: ${err.message}`);
    }
  }

  /** A heatmap whose cells name heads: pressing one (click, Enter or Space) shows that head. */
  function pressable(hm, headOf) {
    const canvas = hm.el.querySelector('canvas');
    const pick = () => {
      const name = headOf(hm.el.dataset.cell);
      if (name) showHead(name);
    };
    canvas.addEventListener('click', pick);
    canvas.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        pick();
      }
    });
  }
  for (const hm of [patchMap, attrMap]) {
    pressable(hm, (cell) => {
      if (!cell || hm.el.dataset.heads !== 'true') return null;
      const [l, k] = cell.split(',');
      return `L${l}H${k}`;
    });
  }
  pressable(compMap, (cell) => cell || null);
  pressable(copyMap, (cell) => cell || null);

  function showSources() {
    sourceBox.replaceChildren(...[...sources.values()].map((s) => h('label', { className: 'check' },
      h('input', { type: 'radio', name: 'cx-source', value: s.kind, checked: s.kind === current, dataset: { testid: `cx-source-${s.kind}` } }),
      ` ${s.label}`)));
    setHidden(sourceBox, sources.size < 2);
    setText(el('model'), src() ? `Model: ${src().label}.` : '');
    const checkpoint = current === 'checkpoint';
    setHidden(el('ioi-field'), !checkpoint);
    const mlp = target.querySelector('option[value=mlp]');
    mlp.disabled = src()?.config.dFF === 0;
    mlp.textContent = mlp.disabled ? 'MLP output (this model has no MLP)' : 'MLP output';
    const option = method.querySelector('option[value=attribution]');
    if (!attributionChecked.has(src()?.model)) {
      option.disabled = false;
      option.textContent = 'attribution (gradient)';
      compare.disabled = false;
      delete method.dataset.checked;
    }
  }

  async function switchTo(kind) {
    current = kind;
    composition = null;
    showSources();
    methods = await call('methods').catch(() => []);
    markStale();
    if (small()) await runAll();
    else {
      // a large model: its prompts read (tokens, lengths, the suggested answer) at once, the analyses on Run
      setText(el('patch-status'), 'A large model: press Run to patch (each cell is a forward pass) and score its heads.');
      const r = await readPrompts();
      if (r !== undefined) read = r;
      markStale();
    }
  }

  sourceBox.addEventListener('change', (e) => {
    if (e.target.name === 'cx-source') switchTo(e.target.value);
  });
  picker.replaceChildren(h('option', { value: '', textContent: 'Choose an IOI prompt…' }),
    ...IOI_PROMPTS.map((p, k) => h('option', { value: String(k), textContent: `${p.clean}… (${p.answer.trim()} vs ${p.other.trim()})` })));
  picker.addEventListener('change', () => {
    const p = IOI_PROMPTS[Number(picker.value)];
    if (!picker.value || !p) return;
    for (const name of ['clean', 'corrupt', 'answer', 'other']) {
      fields[name].value = p[name];
      // the lab's form keeps each field in the state and the link
      fields[name].dispatchEvent(new Event('change', { bubbles: true }));
    }
  });
  // as a prompt is typed: its tokens and the lengths, read again; the results it changes are marked
  let typing = null;
  for (const node of Object.values(fields)) {
    node.addEventListener('input', () => {
      clearTimeout(typing);
      typing = setTimeout(async () => {
        const r = await readPrompts();
        if (r === undefined) return;
        read = r;
        markStale();
      }, 150);
    });
    node.addEventListener('change', () => {
      clearTimeout(typing);
      if (small()) runPrompts();
      else readPrompts().then((r) => { if (r !== undefined) { read = r; markStale(); } });
    });
  }
  for (const node of [target, method, compare]) {
    node.addEventListener('change', () => {
      if (read && small()) runPatch(read);
      else markStale();
    });
  }
  el('qkv').addEventListener('change', showComposition);
  run.addEventListener('click', () => runAll());
  el('example').addEventListener('click', () => {
    picker.value = '';
    for (const name of ['clean', 'corrupt', 'answer', 'other']) {
      fields[name].value = '';
      fields[name].dispatchEvent(new Event('change', { bubbles: true }));
    }
  });

  return {
    /**
     * The model a view hands over: { kind: 'trained' | 'checkpoint', model (the worker's handle), config, steps, label,
     * pair: its example { clean, corrupt } }; it is shown at once (a checkpoint opened is the one analysed).
     */
    use(source) {
      sources.set(source.kind, source);
      setHidden(card, false);
      if (source.kind === 'checkpoint' || !current || current === source.kind) return switchTo(source.kind);
      showSources();
      return null;
    },
    /** The trained model has trained on (its steps): results of its weights before are marked. */
    trained(steps) {
      const s = sources.get('trained');
      if (!s || s.steps === steps) return;
      s.steps = steps;
      s.label = s.labelAt(steps);
      if (current === 'trained') {
        showSources();
        markStale();
      }
    },
    /** A model gone (a checkpoint closed): the panel comes back to the other, if any. */
    drop(kind) {
      sources.delete(kind);
      if (current !== kind) return;
      current = null;
      const next = sources.keys().next().value;
      if (next) switchTo(next);
    },
  };
}
