// Chapter 9's induction heads: a two-layer attention-only transformer on the
// induction task, pretrained when the site ships one (models.json "induction"),
// else trained here with a progress bar. While it trains: test loss and accuracy,
// every head's previous-token and induction scores (the phase change), and every
// head's attention on one whole test sequence, its repeat included. Then heads
// can be switched off; the challenge is to find the head whose loss costs the
// most accuracy. Layers and heads are named from 0, as in the lab (its L1H0 is
// layer 1, head 0 here).
import { h, setHidden, setText } from '../ui/dom.js';
import { drawChart, drawLegend } from '../ui/chart.js';
import { fixed } from '../ui/format.js';
import { FORMED, inductionFormed } from '../engine/induction.js';
import { MASKED_WEIGHTS, causalMasked, createHeatmap } from '../ui/heatmap.js';
import { INDUCTION, headDrops, loadPretrained, recordedHistory, trainInChunks } from './ch9-training.js';
import { labLink, transformerLabFields } from './links.js';
import { writeHandoff } from '../ui/handoff.js';
import { createChallenge } from './progress.js';

const HEAD_COLORS = ['#1b9e77', '#d95f02', '#7570b3', '#e7298a', '#66a61e', '#e6ab02', '#a6761d', '#666666'];
const pct = (v) => `${(v * 100).toFixed(1)}%`;
const name = ({ layer, head }) => `layer ${layer}, head ${head}`;

/** A previous-token score from which the page calls a head a previous-token head. */
export const PREVIOUS_TOKEN_HEAD = 0.5;

/**
 * The sentence on layer 0's previous-token scores (headScores()[0]): the highest, its head, and
 * whether that is a previous-token head (a score of PREVIOUS_TOKEN_HEAD or more) or not.
 */
export function previousTokenText(first) {
  let prev = 0;
  first.forEach((sc, k) => { if (sc.previousToken > first[prev].previousToken) prev = k; });
  const score = first[prev].previousToken;
  const t = `In layer 0 the highest previous-token score is ${fixed(score, 2)} (${name({ layer: 0, head: prev })})`;
  return score >= PREVIOUS_TOKEN_HEAD
    ? `${t}: a previous-token head, the first half of the pair described above.`
    : `${t}, below ${PREVIOUS_TOKEN_HEAD}: no head of layer 0 attends mostly to the token before, so this model has no clear previous-token head.`;
}

/** The least accuracy, in points of 1, that the challenge's head must cost when it is off alone. */
export const COSTLY = 0.2;

/** Why switching off the heads `off` does not solve the challenge, from headDrops()'s { drops } (sorted, largest first). */
export function ablationWhyNot(off, { drops }) {
  const points = (d) => `${fixed(d * 100, 1)} points`;
  const best = drops[0];
  if (off.length === 0) return 'no head is off: switch one off.';
  if (off.length > 1) return `${off.length} heads are off: the challenge counts one head alone.`;
  const mine = drops.find((d) => d.layer === off[0].layer && d.head === off[0].head);
  if (mine !== best) return `${name(off[0])} alone costs ${points(mine.drop)}; another head costs ${points(best.drop)}.`;
  return `${name(off[0])} costs the most, but only ${points(best.drop)}, below ${COSTLY * 100}: this model copies too little for one head to matter. Train one here.`;
}

/** The whole test sequence, its repeat included (as the lab shows it), up to the model's context. */
export const wholeSequence = (example, context) => Array.from(example.input + example.target).slice(0, context).join('');

export function mountInduction(root, { engine, manifest, fetchBytes }) {
  const $ = (r) => root.querySelector(`[data-role=${r}]`);
  const button = $('ind-train');
  const bar = $('ind-progress');
  const status = $('ind-status');
  const text = $('ind-text');
  const ablateSet = $('ablate');
  const ablateText = $('ablate-text');
  const challenge = createChallenge($('challenge'), 'transformer',
    `Switch off the one head that brings the accuracy down the most, by at least ${COSTLY * 100} points. The model trained in advance that the chapter opens with counts, `
    + 'and so does one you train here. (Is it the induction head, or the head that feeds it?)');
  let model = null;
  let history = [];
  let trainLosses = null; // every step's training loss of a model trained here (null: the pretrained one)
  let example = null;
  let drops = null;
  let maps = [];

  function measure(step) {
    const ev = model.evaluate({ count: INDUCTION.evalCount });
    history.push({ step, loss: ev.loss, accuracy: ev.accuracy, scores: model.headScores({ count: INDUCTION.scoreCount }) });
  }

  // loss (nats, up to ~4) and accuracy (0 to 1) on one axis would flatten the accuracy into the
  // bottom quarter: the figure holds two charts, each on its own scale, named above it
  const part = (title, testid) => {
    const chart = h('div', { dataset: { testid } });
    $('ind-loss').append(h('div', { className: 'muted', textContent: title }), chart);
    return chart;
  };
  const lossChart = part('test loss (nats)', 'ch9-loss-chart');
  const accuracyChart = part('accuracy on the repeat (0 to 1)', 'ch9-accuracy-chart');

  function drawCharts() {
    const pts = (f) => history.map((p) => ({ x: p.step, y: f(p) }));
    const loss = { name: 'test loss (nats)', color: '#2166ac', points: pts((p) => p.loss) };
    const accuracy = { name: 'accuracy on the repeat', color: '#b2182b', points: pts((p) => p.accuracy) };
    drawChart(lossChart, [loss], { xLabel: 'step', yLabel: 'test loss', readout: $('ind-loss-readout'), xMin: 0, yMin: 0, integerX: true });
    drawChart(accuracyChart, [accuracy], { xLabel: 'step', yLabel: 'accuracy', readout: $('ind-loss-readout'), xMin: 0, yMin: 0, yMax: 1, integerX: true });
    drawLegend($('ind-loss-legend'), [loss, accuracy]);
    const { layers, heads } = model.config;
    const scores = [];
    for (let head = 0; head < heads; head++) {
      scores.push({ name: `${name({ layer: 0, head })}: previous-token`, color: HEAD_COLORS[head % 8], points: pts((p) => p.scores[0][head].previousToken) });
    }
    for (let head = 0; head < heads; head++) {
      scores.push({ name: `${name({ layer: layers - 1, head })}: induction`, color: HEAD_COLORS[(heads + head) % 8], points: pts((p) => p.scores[layers - 1][head].induction) });
    }
    drawChart($('ind-scores'), scores, { xLabel: 'step', yLabel: 'score', readout: $('ind-scores-readout'), xMin: 0, yMin: 0, yMax: 1, integerX: true });
    drawLegend($('ind-scores-legend'), scores);
  }

  function drawHeads() {
    const { layers, heads } = model.config;
    const v = model.inspect(wholeSequence(example, model.config.context));
    const last = history[history.length - 1]?.scores;
    if (maps.length !== layers * heads) {
      maps = [];
      const host = $('ind-heads');
      host.replaceChildren();
      // one row per layer (CSSOM, which the page's CSP allows; no style attribute)
      host.style.setProperty('--heads', String(heads));
      for (let layer = 0; layer < layers; layer++) {
        for (let head = 0; head < heads; head++) {
          const hm = createHeatmap({ id: `ch9-head-${layer}-${head}`, label: `Attention of ${name({ layer, head })}`, axes: 'query ↓ key →', uprightCols: true });
          const title = h('h5', { textContent: name({ layer, head }) });
          host.append(h('div', { className: 'head-map' }, title, hm.el));
          maps.push({ layer, head, hm, title });
        }
      }
    }
    for (const m of maps) {
      const a = v.attention[m.layer][m.head];
      const s = last?.[m.layer][m.head];
      setText(m.title, s ? `${name(m)}: previous-token ${fixed(s.previousToken, 2)}, induction ${fixed(s.induction, 2)}` : name(m));
      // the model is causal: what a query may not see is drawn masked, not as a weight of 0
      m.hm.update(causalMasked(a), {
        rowLabels: v.tokens, colLabels: v.tokens, kind: 'unit', legend: 'attention weight', maxCell: 12, showValues: false, masked: MASKED_WEIGHTS,
        describe: (i, j) => ({ title: `“${v.tokens[i]}” (${i}) → “${v.tokens[j]}” (${j})`, lines: [`α = ${fixed(a.data[i * a.cols + j], 3)}`] }),
      });
    }
    setText($('ind-example'), `(“${v.tokens.join('')}”: the second copy of the stretch ends the sequence, and its letters after the first, “${example.target}”, are the ones scored)`);
  }

  function describe() {
    const end = history[history.length - 1];
    const f = inductionFormed(history.map((p) => ({ step: p.step, heads: p.scores })), history.map((p) => ({ step: p.step, value: p.loss })), 1);
    let t = `After ${end.step.toLocaleString('en')} steps: test loss ${fixed(end.loss, 3)}, accuracy ${pct(end.accuracy)} on the repeated letters.`;
    t += f
      ? ` Layer ${f.layer}, head ${f.head} formed as an induction head at step ${f.step.toLocaleString('en')}: its induction score rose from ${fixed(f.fromScore, 2)} at step ${f.fromStep.toLocaleString('en')} to ${fixed(f.score, 2)}, while the test loss went from ${fixed(f.lossFrom, 3)} to ${fixed(f.lossTo, 3)}.`
      : ` No induction head has formed yet: a head of layer 1 counts as formed when its induction score passes ${FORMED}.`;
    t += ` ${previousTokenText(end.scores[0])}`;
    setText(text, t);
  }

  function setupAblation() {
    const { layers, heads } = model.config;
    drops = headDrops(model);
    const boxes = [];
    for (let layer = 0; layer < layers; layer++) {
      for (let head = 0; head < heads; head++) {
        const input = h('input', { type: 'checkbox', dataset: { layer, head, testid: `ch9-ablate-${layer}-${head}` } });
        input.addEventListener('change', ablate);
        boxes.push(h('label', { className: 'check' }, input, h('span', { textContent: ` ${name({ layer, head })}` })));
      }
    }
    $('ablate-boxes').replaceChildren(...boxes);
    ablateSet.disabled = false;
    setText(ablateText, `With every head on: ${pct(drops.base)} of ${INDUCTION.evalCount} test sequences' repeated letters right.`);
  }

  function ablate() {
    const off = [...ablateSet.querySelectorAll('input:checked')].map((i) => ({ layer: Number(i.dataset.layer), head: Number(i.dataset.head) }));
    const acc = model.evaluate({ count: INDUCTION.evalCount, ablate: off }).accuracy;
    setText(ablateText, off.length
      ? `With ${off.map(name).join('; ')} off: accuracy ${pct(acc)} (every head on: ${pct(drops.base)}; ${acc <= drops.base ? 'a drop' : 'a rise'} of ${fixed(Math.abs(drops.base - acc) * 100, 1)} points).`
      : `With every head on: accuracy ${pct(acc)}.`);
    const best = drops.drops[0];
    // solved: one head off, the one whose loss costs the most, and a real cost (a trained model)
    const ok = off.length === 1 && off[0].layer === best.layer && off[0].head === best.head && best.drop >= COSTLY;
    challenge.check(ok, ok ? '' : ablationWhyNot(off, drops));
  }

  async function adopt(m, source) {
    model?.destroy();
    model = m;
    [example] = model.examples({ split: 'test', count: 1 });
    history = [];
    trainLosses = null;
    maps = [];
    ablateSet.disabled = true;
    root.dataset.trained = 'false'; // a model trained before (the pretrained one) is gone
    $('ablate-boxes').replaceChildren();
    setText(ablateText, '');
    setText(status, source);
  }

  async function train() {
    button.disabled = true;
    await adopt(await engine.createTransformer(INDUCTION.model), 'Training…');
    measure(0);
    drawCharts();
    drawHeads();
    bar.value = 0;
    root.dataset.training = 'true';
    try {
      trainLosses = await trainInChunks(model, {
        steps: INDUCTION.steps, lr: INDUCTION.lr, warmup: INDUCTION.warmup,
        onChunk: ({ step }) => {
          bar.value = step / INDUCTION.steps;
          if (step % INDUCTION.every && step !== INDUCTION.steps) return;
          measure(step);
          drawCharts();
          drawHeads();
          describe();
        },
      });
      setText(status, `Trained here: ${INDUCTION.steps.toLocaleString('en')} steps of ${INDUCTION.model.batch} sequences.`);
      setupAblation();
      root.dataset.trained = 'true';
    } catch (err) {
      setText(status, `Training stopped: ${err.message}`);
    } finally {
      root.dataset.training = 'false';
      button.disabled = false;
      button.textContent = 'Train it again';
    }
  }
  button.addEventListener('click', train);

  // the same model in the lab's Transformer family (on the pretrained one when the site ships it)
  const shipped = manifest?.models?.induction;
  const spec = shipped?.options ? shipped : { options: INDUCTION.model, lr: INDUCTION.lr };
  const open = h('a', { href: labLink(transformerLabFields(spec)), dataset: { role: 'open-lab', testid: 'open-lab-transformer' },
    textContent: 'Watch every head of this model in the lab (the Transformer family: time-lapse, ablation, logit lens) →' });
  ablateSet.after(h('p', { className: 'open' }, open));
  // a model trained here goes to the lab itself, with its run (web/ui/handoff.js); the pretrained one the lab ships
  open.addEventListener('click', () => {
    const here = trainLosses !== null && model && trainLosses.length === model.steps;
    const handed = here && writeHandoff(window.localStorage, {
      kind: 'transformer', bytes: model.save(), label: 'the model trained in Learn, chapter 9',
      history: {
        losses: trainLosses,
        accuracy: history.map((p) => ({ step: p.step, value: p.accuracy })),
        scores: history.map((p) => ({ step: p.step, heads: p.scores })),
      },
    });
    open.href = labLink(transformerLabFields(handed ? { options: model.config } : spec, handed ? { start: 'learn' } : {}));
  });

  setText(status, `Not trained yet: ${INDUCTION.steps.toLocaleString('en')} steps, a few seconds.`);
  setHidden(bar, false);
  // a pretrained model, when the site ships one, shows at once; training it again stays possible
  const ready = loadPretrained(engine, manifest, fetchBytes).then(async (m) => {
    if (!m || model) return;
    await adopt(m, 'A model trained in advance (models.json: induction), with its recorded run.');
    history = recordedHistory(manifest?.models?.induction, m.config.layers, m.config.heads);
    if (history.at(-1)?.step !== m.steps) measure(m.steps);
    drawCharts();
    drawHeads();
    describe();
    setupAblation();
    root.dataset.trained = 'true';
  }).catch((err) => setText(status, `The pretrained model did not load (${err.message}): press Train it.`));
  return { ready, get model() { return model; }, get history() { return history; }, get drops() { return drops; } };
}
