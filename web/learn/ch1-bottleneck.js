// Chapter 1, the bottleneck: the pretrained reverse models with and without
// attention, their test accuracy by input length (evaluated when the page loads),
// and the attention model's alignment for the reader's own digits.
import { h, setText } from '../ui/dom.js';
import { createHeatmap } from '../ui/heatmap.js';
import { drawChart, drawLegend } from '../ui/chart.js';
import { fixed } from '../ui/format.js';
import { createChallenge } from './progress.js';
import { labFieldsFor, labLink } from './links.js';
import { percent, quote } from './numbers.js';

const reverse = (s) => [...s].reverse().join('');
const COLORS = { attention: '#2f56d6', bottleneck: '#c2255c' };

/** Accuracy over inputs of at least `from` characters, from an evaluate() result's byLength. */
function longTail(byLength, from) {
  const tail = byLength.filter((b) => b.length >= from);
  const count = tail.reduce((a, b) => a + b.count, 0);
  return tail.reduce((a, b) => a + b.sequenceAccuracy * b.count, 0) / count;
}

/** How thin the test set is at short lengths: the shortest length's draws among its few possible strings, and the lengths it lacks. */
export function sparseText(byLength, minLength, maxLength) {
  const shortest = byLength.find((b) => b.length === minLength);
  const have = new Set(byLength.map((b) => b.length));
  const absent = [];
  for (let n = minLength; n <= maxLength; n++) if (!have.has(n)) absent.push(n);
  const parts = [];
  if (shortest) parts.push(`its ${shortest.count} strings of ${minLength} digits are draws among at most ${(10 ** minLength).toLocaleString('en')} possible strings`);
  if (absent.length) parts.push(`none has ${absent.join(', ')} digits`);
  return parts.join(', and ') || 'every length has its own strings';
}

export function mountBottleneck(root, { models, manifest }) {
  const specA = manifest.models['reverse-attention'];
  const { minLength, maxLength } = specA.options;
  quote('ch1.maxLength', maxLength, String(maxLength));
  quote('ch1.minLength', minLength, String(minLength));
  quote('ch1.hidden', specA.options.hidden, String(specA.options.hidden));
  const input = root.querySelector('[data-role=input]');
  input.maxLength = maxLength;
  const outA = root.querySelector('[data-role=out-attention]');
  const outB = root.querySelector('[data-role=out-bottleneck]');
  const hm = createHeatmap({ id: 'ch1-alignment', label: 'Alignment of the attention model: output characters by input characters', axes: 'output ↓ input →' });
  root.querySelector('[data-role=alignment]').append(hm.el);
  const link = root.querySelector('[data-role=open-lab]');
  const tailFrom = maxLength - 3;
  const challenge = createChallenge(root.querySelector('[data-role=challenge]'), 'bottleneck',
    `Type a sequence of at least ${tailFrom} digits that the bottleneck model reverses wrongly and the attention model reverses correctly.`);
  let bottleneckTest = null; // the bottleneck's test accuracy by length, once measure() has run

  /** Why the typed digits do not solve the challenge (a, b: show()'s results for the two models). */
  function whyNot(clean, a, b) {
    const n = clean.length;
    if (n < tailFrom) {
      const at = bottleneckTest?.byLength.find((r) => r.length === n);
      const tested = at ? ` On test strings of ${n} digits the bottleneck reverses ${percent(at.sequenceAccuracy)} right, `
        + `on those of ${tailFrom} to ${maxLength} digits ${percent(bottleneckTest.tail)}.` : '';
      return `${n} digits: the challenge needs at least ${tailFrom}.${tested}`;
    }
    if (!a.ok) return `the attention model gets these ${n} digits wrong too (it wrote ${a.t.output || 'nothing'}). Try another string.`;
    const tested = bottleneckTest ? `, as it does ${percent(bottleneckTest.tail)} of the test strings of ${tailFrom} to ${maxLength} digits` : '';
    return `the bottleneck reverses these ${n} digits right too${tested}. Try another string${n < maxLength ? ', or a longer one' : ''}.`;
  }

  function show(model, text, el) {
    const t = model.translate(text);
    const ok = t.output === reverse(text);
    setText(el, t.output || '(nothing)');
    el.dataset.correct = String(ok);
    el.nextElementSibling.textContent = ok ? '✓ correct' : `✗ should be ${reverse(text)}`;
    return { t, ok };
  }

  function update() {
    const clean = input.value.replace(/[^0-9]/g, '').slice(0, maxLength);
    if (clean !== input.value) input.value = clean;
    const valid = clean.length >= minLength;
    input.setAttribute('aria-invalid', String(!valid));
    root.querySelector('[data-role=input-hint]').textContent = valid ? `${clean.length} digits` : `Type ${minLength} to ${maxLength} digits.`;
    if (!valid) return;
    const a = show(models.attention, clean, outA);
    const b = show(models.bottleneck, clean, outB);
    hm.update(a.t.alignment, {
      rowLabels: a.t.outputTokens, colLabels: a.t.inputTokens, kind: 'unit', legend: 'attention weight α', maxCell: 34,
      describe: (i, j) => ({
        title: `output ${i} “${a.t.outputTokens[i]}” looks at input ${j} “${a.t.inputTokens[j]}”`,
        lines: [`α = ${fixed(a.t.alignment.data[i * a.t.alignment.cols + j], 3)}`],
      }),
    });
    link.href = labLink(labFieldsFor(specA, { compare: 'none', text: clean }));
    const ok = clean.length >= tailFrom && a.ok && !b.ok;
    challenge.check(ok, ok ? '' : whyNot(clean, a, b));
  }
  input.addEventListener('input', update);
  update();

  /**
   * The test accuracy of both models (evaluated after the widget is interactive): chart and prose;
   * the two evaluations in two tasks, so the page answers input between them.
   */
  async function measure() {
    const count = manifest.evalCount;
    const evA = models.attention.evaluate({ split: 'test', count });
    await new Promise((ok) => setTimeout(ok, 0));
    const evB = models.bottleneck.evaluate({ split: 'test', count });
    quote('ch1.count', count, String(count));
    quote('ch1.accAttention', evA.sequenceAccuracy, percent(evA.sequenceAccuracy));
    quote('ch1.accBottleneck', evB.sequenceAccuracy, percent(evB.sequenceAccuracy));
    const tailA = longTail(evA.byLength, tailFrom);
    const tailB = longTail(evB.byLength, tailFrom);
    bottleneckTest = { byLength: evB.byLength, tail: tailB };
    quote('ch1.tailAttention', tailA, percent(tailA));
    quote('ch1.tailBottleneck', tailB, percent(tailB));
    quote('ch1.tailFrom', tailFrom, String(tailFrom));
    quote('ch1.steps', specA.steps, specA.steps.toLocaleString('en'));
    quote('ch1.sparse', evA.byLength.map((b) => [b.length, b.count]), sparseText(evA.byLength, minLength, maxLength));

    const series = [
      { name: 'with attention', color: COLORS.attention, points: evA.byLength.map((b) => ({ x: b.length, y: b.sequenceAccuracy })) },
      { name: 'bottleneck (no attention)', color: COLORS.bottleneck, points: evB.byLength.map((b) => ({ x: b.length, y: b.sequenceAccuracy })) },
    ];
    const chartReadout = root.querySelector('[data-role=chart-readout]');
    drawChart(root.querySelector('[data-role=chart]'), series, { xLabel: 'input length', yLabel: 'test accuracy', readout: chartReadout, xMin: 0, xMax: maxLength, yMin: 0, yMax: 1, integerX: true });
    drawLegend(root.querySelector('[data-role=legend]'), series);
  }
  return { update, measure };
}
