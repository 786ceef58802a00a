// Chapter 11, finding a circuit. First on the reader's own induction model (the
// engine's induction defaults, trained here as chapter 9 trains them): a clean
// repeated sequence and a corrupt one in which the answer's earlier context is
// moved; patching each head's output from the clean run into the corrupt one
// (m.patch, target 'heads') drawn as layers × heads, and K-composition
// (m.compositionScores().k) naming the same pair: the induction circuit found two
// ways, every number computed here and the sentences written from them. Then,
// with chapter 10's GPT-2 open (in that chapter's worker), Wang et al.'s 8
// indirect-object prompts: the mean logit difference and the heads' patching,
// beside what Wang et al. and TransformerLens's demo report, quoted as theirs.
// The challenge: pick the layer-0 head the induction head reads from (a button,
// or a cell of the patching map).
import { h, setHidden, setText } from '../ui/dom.js';
import { fixed } from '../ui/format.js';
import { createHeatmap } from '../ui/heatmap.js';
import { INDUCTION, trainInChunks } from './ch9-training.js';
import { createChallenge } from './progress.js';

/** The clean sequence (token ids of the induction task's letters): “drivamfdri”, whose earlier “i” was followed by “v”. */
export const CLEAN = Object.freeze([3, 17, 8, 21, 0, 12, 5, 3, 17, 8]);
/**
 * The corrupt one, “drjvaifdri”: the same letters where it matters, with the earlier “i” moved from before “v”
 * to before “f”. What an induction head copies (“v”, “f”) stays in place; only which letter precedes them changes,
 * which is what a previous-token head writes there.
 */
export const CORRUPT = Object.freeze([3, 17, 9, 21, 0, 8, 5, 3, 17, 8]);
/** The metric's pair: logit[v] − logit[f] at the last position (v, the clean answer; f, the corrupt one). */
export const ANSWER = Object.freeze([21, 5]);

export const headName = (layer, head) => `L${layer}H${head}`;
const f2 = (v) => fixed(v, 2);

/**
 * The induction circuit on `model` two ways: { patch (m.patch's result), k (K-composition), reader, induction,
 * strongest, agree }. reader: the layer-0 head whose output, put back alone, recovers most of the answer; induction:
 * the later head that recovers most; strongest: the largest K-composition from a layer-0 head; agree: both name the
 * same layer-0 head.
 */
export function findCircuit(model) {
  const { layers, heads } = model.config;
  const patch = model.patch({ clean: [...CLEAN], corrupt: [...CORRUPT], answer: [...ANSWER], target: 'heads' });
  const { k } = model.compositionScores();
  const at = (layer, head) => patch.data[layer * heads + head];
  let reader = { layer: 0, head: 0, value: at(0, 0) };
  for (let head = 1; head < heads; head++) if (at(0, head) > reader.value) reader = { layer: 0, head, value: at(0, head) };
  let induction = null;
  for (let layer = 1; layer < layers; layer++) {
    for (let head = 0; head < heads; head++) if (!induction || at(layer, head) > induction.value) induction = { layer, head, value: at(layer, head) };
  }
  const kc = (i, j) => k.data[i * k.cols + j];
  let strongest = null;
  for (let i = 0; i < heads; i++) {
    for (let j = heads; j < layers * heads; j++) {
      if (!strongest || kc(i, j) > strongest.value) strongest = { from: { layer: 0, head: i }, to: { layer: Math.floor(j / heads), head: j % heads }, value: kc(i, j) };
    }
  }
  const pairK = induction ? kc(reader.head, induction.layer * heads + induction.head) : 0;
  return { patch, k, reader, induction, strongest, pairK, agree: strongest?.from.head === reader.head, layers, heads };
}

/** What the numbers show, in words, from findCircuit()'s result. */
export function circuitText(c) {
  const { patch, k, layers, heads } = c;
  const lines = [];
  const row = (layer) => Array.from({ length: heads }, (_, head) => `${headName(layer, head)} ${f2(patch.data[layer * heads + head])}`).join(', ');
  lines.push(`The logit difference v − f at the last letter is ${f2(patch.clean)} on the clean sequence and ${f2(patch.corrupt)} on the corrupt one. `
    + `Putting back one head's output from the clean run recovers this share of it: in layer 0 ${row(0)}; `
    + `${Array.from({ length: layers - 1 }, (_, l) => `in layer ${l + 1} ${row(l + 1)}`).join('; ')}.`);
  const from = (i) => Array.from({ length: (layers - 1) * heads }, (_, j) => {
    const later = heads + j;
    return `${headName(Math.floor(later / heads), later % heads)} ${f2(k.data[i * k.cols + later])}`;
  }).join(', ');
  lines.push(`K-composition, from the weights alone: ${Array.from({ length: heads }, (_, i) => `${headName(0, i)}'s output reaches the keys of ${from(i)}`).join('; ')}.`);
  const { reader, induction, strongest } = c;
  if (!induction) return lines.join(' ');
  const pair = `${headName(0, reader.head)} → ${headName(induction.layer, induction.head)}`;
  lines.push(c.agree
    ? `Both ways name ${headName(0, reader.head)} as the head the induction head reads from, ${pair}: patching recovers ${f2(reader.value)} of the answer through ${headName(0, reader.head)} and ${f2(induction.value)} through ${headName(induction.layer, induction.head)}; their K-composition is ${f2(c.pairK)}`
      + ` (the strongest from layer 0: ${headName(0, strongest.from.head)} → ${headName(strongest.to.layer, strongest.to.head)}, ${f2(strongest.value)}).`
    : `The two ways disagree: patching names ${headName(0, reader.head)} (${f2(reader.value)}), K-composition ${headName(0, strongest.from.head)} → ${headName(strongest.to.layer, strongest.to.head)} (${f2(strongest.value)}): this model's layer 0 has no single previous-token head the induction head reads from.`);
  return lines.join(' ');
}

/** Why the picked head ({ layer, head }) is not the layer-0 head the induction head reads from, or '' when it is. */
export function readerWhyNot(pick, c) {
  if (!pick) return 'no head picked: press a head, or a cell of the patching map.';
  const at = c.patch.data[pick.layer * c.heads + pick.head];
  const name = headName(pick.layer, pick.head);
  if (pick.layer !== 0) return `${name} is in layer ${pick.layer}: putting back its output recovers ${f2(at)}; it reads, and the challenge asks for the layer-0 head it reads from.`;
  if (pick.head !== c.reader.head) {
    return `${name}: putting back its output recovers ${f2(at)} of the answer, and ${headName(0, c.reader.head)}'s recovers ${f2(c.reader.value)}; look for the layer-0 head that carries the answer.`;
  }
  if (!c.agree) return `${name} carries most of the answer (${f2(at)}), but its K-composition is not layer 0's strongest: the two ways do not agree on this model. Train it again.`;
  return '';
}

/** Wang et al. (2022)'s classes of GPT-2 small's heads in the indirect-object circuit, as they report them (layer.head). */
export const WANG_CLASSES = Object.freeze([
  { name: 'name movers', heads: ['9.9', '9.6', '10.0'] },
  { name: 'S-inhibition', heads: ['7.3', '7.9', '8.6', '8.10'] },
  { name: 'induction', heads: ['5.5', '6.9'] },
  { name: 'duplicate-token', heads: ['0.1', '3.0'] },
  { name: 'negative name movers', heads: ['10.7', '11.10'] },
]);

/**
 * The heads of WANG_CLASSES the model has, with their share recovered here (data: layers × heads, row-major), as a
 * sentence that says whose classes they are and whose numbers: '' when the model has none of them.
 */
export function besideWang(data, layers, heads) {
  const parts = WANG_CLASSES.map(({ name, heads: named }) => {
    const here = named.map((lh) => lh.split('.').map(Number)).filter(([l, k]) => l < layers && k < heads);
    return here.length ? `${name} ${here.map(([l, k]) => `${l}.${k} ${f2(data[l * heads + k])}`).join(', ')}` : '';
  }).filter(Boolean);
  return parts.length ? `The heads Wang et al. (2022) name, with the share each recovers here (computed on the model on screen): ${parts.join('; ')}.` : '';
}

/**
 * The 8 indirect-object prompts of TransformerLens's exploratory analysis demo, after Wang et al. (2022):
 * 4 templates × 2 name orders, each with its answer (the indirect object) and the wrong name (the subject).
 * Each prompt's corrupt partner is the other name order of its template (the same length in tokens).
 */
const TEMPLATES = [
  ['When John and Mary went to the shops,', 'gave the bag to', ' John', ' Mary'],
  ['When Tom and James went to the park,', 'gave the ball to', ' Tom', ' James'],
  ['When Dan and Sid went to the shops,', 'gave an apple to', ' Dan', ' Sid'],
  ['After Martin and Amy went to the park,', 'gave a drink to', ' Martin', ' Amy'],
];
export const IOI_PROMPTS = Object.freeze(TEMPLATES.flatMap(([start, end, a, b]) => [
  { text: `${start}${a} ${end}`, answer: b, wrong: a },
  { text: `${start}${b} ${end}`, answer: a, wrong: b },
]));
/** Each prompt's partner: the same template with the other name order. */
export const partnerOf = (i) => (i % 2 === 0 ? i + 1 : i - 1);

/**
 * The heads' patching over all prompts, normalised as TransformerLens does for a batch: each head's patched logit
 * differences averaged, then (mean patched − mean corrupt) / (mean clean − mean corrupt). runs: [{ clean, corrupt, data }].
 */
export function batchPatch(runs) {
  const n = runs.length;
  const clean = runs.reduce((s, r) => s + r.clean, 0) / n;
  const corrupt = runs.reduce((s, r) => s + r.corrupt, 0) / n;
  const data = new Float32Array(runs[0].data.length);
  for (let c = 0; c < data.length; c++) {
    let patched = 0;
    for (const r of runs) patched += r.corrupt + r.data[c] * (r.clean - r.corrupt);
    data[c] = (patched / n - corrupt) / (clean - corrupt);
  }
  return { clean, corrupt, data };
}

export const WANG_SOURCE = 'https://arxiv.org/abs/2211.00593';
export const DEMO_SOURCE = 'https://github.com/TransformerLensOrg/TransformerLens/blob/main/demos/Exploratory_Analysis_Demo.ipynb';

export function mountCircuit(root, { engine, gpt2 }) {
  const $ = (r) => root.querySelector(`[data-role=${r}]`);
  const challenge = createChallenge($('challenge'), 'circuit',
    'Find the layer-0 head the induction head reads from: press it below, or its cell in the patching map. Patching and K-composition both point at it.');
  let model = null;
  let circuit = null;
  let pick = null;

  const patchMap = createHeatmap({ id: 'ch11-patch', label: 'Share of the answer recovered by putting back each head\'s output', axes: 'layer ↓ head →', uprightCols: true });
  const kMap = createHeatmap({ id: 'ch11-k', label: 'K-composition of every pair of heads (row: the earlier head, column: the later)', axes: 'earlier ↓ later →', uprightCols: true });
  $('maps').replaceChildren(h('div', {}, patchMap.el), h('div', {}, kMap.el));
  setHidden($('maps'), true);

  const sequences = () => {
    const letters = (ids) => ids.map((id) => model.config.vocabulary[id]).join('');
    const [a, b] = ANSWER.map((id) => model.config.vocabulary[id]);
    setText($('sequences'), `Clean: “${letters(CLEAN)}”, where the earlier “${letters([CLEAN.at(-1)])}” was followed by “${a}”: an induction head predicts ${a}. `
      + `Corrupt: “${letters(CORRUPT)}”, the same letters but that “${letters([CLEAN.at(-1)])}” moved, now before “${b}”: it predicts ${b}. The metric is logit[${a}] − logit[${b}] at the last letter.`);
  };

  function draw() {
    const { layers, heads } = circuit;
    const rowLabels = Array.from({ length: layers }, (_, l) => `L${l}`);
    const colLabels = Array.from({ length: heads }, (_, k) => `H${k}`);
    const { data } = circuit.patch;
    patchMap.update({ rows: layers, cols: heads, data }, {
      rowLabels, colLabels, kind: 'signed', maxCell: 56, everyLabel: true, showValues: true,
      legend: 'share of the answer recovered (0: none, 1: all)',
      describe: (i, j) => ({ title: headName(i, j), lines: [`putting back its output recovers ${fixed(data[i * heads + j], 3)} of the answer`] }),
      onHover: (i, j) => { hovered = i === null ? hovered : { layer: i, head: j }; },
    });
    const names = Array.from({ length: layers * heads }, (_, x) => headName(Math.floor(x / heads), x % heads));
    const { k } = circuit;
    kMap.update(k, {
      rowLabels: names, colLabels: names, kind: 'unit', maxCell: 40, everyLabel: true, showValues: true,
      legend: 'K-composition (0 to 1; 0 where the row is not earlier)',
      describe: (i, j) => ({ title: `${names[i]} → ${names[j]}`, lines: [`K-composition ${fixed(k.data[i * k.cols + j], 3)}`] }),
    });
    setHidden($('maps'), false);
    const text = $('text');
    Object.assign(text.dataset, { reader: headName(0, circuit.reader.head), agree: String(circuit.agree), clean: String(circuit.patch.clean), corrupt: String(circuit.patch.corrupt) });
    setText(text, circuitText(circuit));
  }

  // the challenge: a button per head, and a cell of the patching map clicked (or Enter on it)
  let hovered = null;
  const choose = (p) => {
    pick = p;
    for (const b of $('heads').querySelectorAll('button')) b.setAttribute('aria-pressed', String(b.dataset.layer === String(p.layer) && b.dataset.head === String(p.head)));
    const why = readerWhyNot(p, circuit);
    setText($('pick-text'), why ? `You picked ${headName(p.layer, p.head)}.` : `You picked ${headName(p.layer, p.head)}: the previous-token head the induction head reads from.`);
    challenge.check(why === '', why);
  };
  const canvas = patchMap.el.querySelector('canvas');
  canvas.addEventListener('click', () => { if (circuit && hovered) choose(hovered); });
  canvas.addEventListener('keydown', (e) => { if (e.key === 'Enter' && circuit && hovered) choose(hovered); });

  function headButtons() {
    const { layers, heads } = circuit;
    const buttons = [];
    for (let layer = 0; layer < layers; layer++) {
      for (let head = 0; head < heads; head++) {
        const b = h('button', { type: 'button', textContent: headName(layer, head), dataset: { layer, head, testid: `ch11-pick-${layer}-${head}` }, attrs: { 'aria-pressed': 'false' } });
        b.addEventListener('click', () => choose({ layer, head }));
        buttons.push(b);
      }
    }
    $('heads').replaceChildren(...buttons);
    setHidden($('pick'), false);
  }

  async function train() {
    const button = $('train');
    button.disabled = true;
    root.dataset.trained = 'false';
    setHidden($('pick'), true);
    model?.destroy();
    model = null;
    circuit = null;
    const bar = $('progress');
    bar.value = 0;
    try {
      model = await engine.createTransformer(INDUCTION.model);
      setText($('status'), 'Training…');
      await trainInChunks(model, {
        steps: INDUCTION.steps, lr: INDUCTION.lr, warmup: INDUCTION.warmup,
        onChunk: ({ step }) => { bar.value = step / INDUCTION.steps; },
      });
      setText($('status'), `Trained here: ${INDUCTION.steps.toLocaleString('en')} steps of ${INDUCTION.model.batch} sequences, the induction defaults of chapter 9 (seed ${INDUCTION.model.seed}).`);
      sequences();
      circuit = findCircuit(model);
      draw();
      headButtons();
      root.dataset.trained = 'true';
    } catch (err) {
      setText($('status'), `Training stopped: ${err.message}`);
    } finally {
      button.disabled = false;
      button.textContent = 'Train it again';
    }
  }
  $('train').addEventListener('click', train);
  setText($('status'), `Not trained yet: ${INDUCTION.steps.toLocaleString('en')} steps, a few seconds.`);

  // GPT-2: chapter 10's model, in chapter 10's worker
  const ioiMap = createHeatmap({ id: 'ch11-ioi', label: 'Share of the logit difference recovered by putting back each head\'s output, over the 8 prompts', axes: 'layer ↓ head →', uprightCols: true });
  $('ioi-map').replaceChildren(ioiMap.el);
  setHidden($('ioi-map'), true);

  async function ioi() {
    const open = gpt2?.model;
    const out = $('ioi-text');
    if (!open) {
      setText(out, 'No model is open: open GPT-2 in chapter 10 (a card or its files), then run the prompts here.');
      return;
    }
    const call = (action, args = {}) => gpt2.call(action, args);
    const { config } = open;
    const button = $('ioi-run');
    button.disabled = true;
    setText($('ioi-beside'), '');
    root.dataset.ioi = 'running';
    try {
      const names = Array.isArray(config.vocabulary) ? config.vocabulary : [];
      const bos = names.indexOf('<|endoftext|>');
      const ids = async (text) => [...(bos >= 0 ? [bos] : []), ...(await call('tokenize', { text })).ids];
      const one = async (text) => {
        const t = (await call('tokenize', { text })).ids;
        if (t.length !== 1) throw new Error(`“${text}” is ${t.length} tokens in this model's tokenizer, not one`);
        return t[0];
      };
      const prompts = [];
      for (const p of IOI_PROMPTS) prompts.push({ ...p, ids: await ids(p.text), a: await one(p.answer), b: await one(p.wrong) });
      const lengths = prompts.map((p) => p.ids.length);
      out.dataset.lengths = lengths.join(',');
      const runs = [];
      for (const [i, p] of prompts.entries()) {
        const partner = prompts[partnerOf(i)];
        if (partner.ids.length !== p.ids.length) throw new Error(`prompt ${i + 1} is ${p.ids.length} tokens and its partner ${partner.ids.length}: the names are not one token each in this tokenizer`);
        setText(out, `Patching every head on prompt ${i + 1} of ${prompts.length}…`);
        runs.push(await call('patch', { options: { clean: { ids: p.ids }, corrupt: { ids: partner.ids }, answer: [p.a, p.b], target: 'heads' } }));
      }
      const b = batchPatch(runs);
      const { layers, heads } = config;
      ioiMap.update({ rows: layers, cols: heads, data: b.data }, {
        rowLabels: Array.from({ length: layers }, (_, l) => `L${l}`), colLabels: Array.from({ length: heads }, (_, k) => `H${k}`),
        kind: 'signed', maxCell: 32, everyLabel: true, legend: 'share of the logit difference recovered (mean over the 8 prompts)',
        describe: (i, j) => ({ title: `head ${i}.${j}`, lines: [`recovers ${fixed(b.data[i * heads + j], 3)}`] }),
      });
      setHidden($('ioi-map'), false);
      const ranked = Array.from(b.data, (value, x) => ({ name: `${Math.floor(x / heads)}.${x % heads}`, value })).sort((p, q) => q.value - p.value);
      const list = (xs) => xs.map((x) => `${x.name} (${f2(x.value)})`).join(', ');
      let ablated = '';
      if (layers > 9 && heads > 9) {
        // logit[a] − logit[b] = log p(a) − log p(b): the mean loss over a prompt with a appended, against b, times its predictions
        let sum = 0;
        for (const p of prompts) {
          const loss = async (last) => (await call('evaluate', { options: { ids: [...p.ids, last], ablate: [{ layer: 9, head: 9 }] } })).loss;
          sum += p.ids.length * ((await loss(p.b)) - (await loss(p.a)));
        }
        ablated = ` With head 9.9's output zeroed, the mean logit difference here is ${fixed(sum / prompts.length, 4)}.`;
        out.dataset.ablated = String(sum / prompts.length);
      }
      setText($('ioi-beside'), besideWang(b.data, layers, heads));
      Object.assign(out.dataset, { clean: String(b.clean), corrupt: String(b.corrupt), top: ranked[0].name });
      setText(out, `Computed here, on the model on screen (${layers} layers × ${heads} heads): the mean logit difference over the 8 prompts is ${fixed(b.clean, 4)} `
        + `(each prompt's answer against its subject; with the other name order's run, ${fixed(b.corrupt, 4)}). Putting back one head's output from the clean run `
        + `recovers most through ${list(ranked.slice(0, 5))}, and least through ${list(ranked.slice(-2).reverse())}.${ablated}`);
      root.dataset.ioi = 'done';
    } catch (err) {
      setText(out, `The prompts could not be run: ${err.message}`);
      root.dataset.ioi = 'error';
    } finally {
      button.disabled = false;
    }
  }
  $('ioi-run').addEventListener('click', () => ioi());
  const list = $('ioi-prompts');
  list.replaceChildren(...IOI_PROMPTS.map((p) => h('li', { textContent: `${p.text} …${p.answer} (not${p.wrong})` })));

  return { get model() { return model; }, get circuit() { return circuit; }, train };
}
