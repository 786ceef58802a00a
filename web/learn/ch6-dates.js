// Chapter 6, attention in seq2seq: the pretrained dates model; the reader picks
// one of the formats it was trained on, or types a date, and sees the output, the
// alignment and which input characters each part of the output reads, then opens
// the lab with the same model settings and input to train one.
import { h, setText } from '../ui/dom.js';
import { createHeatmap } from '../ui/heatmap.js';
import { fixed } from '../ui/format.js';
import { createChallenge } from './progress.js';
import { labFieldsFor, labLink } from './links.js';
import { percent, quote } from './numbers.js';

export const EXAMPLE = '25th of June, 2009';
export const TARGET = '1999-12-31';
/**
 * The date formats of the dates task (src/tasks/tasks.c, format_date), each as 25 June 2009
 * (a Thursday) reads in it. A browser test checks that every example the task draws is in one.
 */
export const FORMATS = [
  '25th of June, 2009', 'Thursday, 25 June 2009', '06/25/09', 'jun 25 2009', '25 June 2009', 'June 25, 2009',
  '25.06.2009', '25-Jun-2009', "Jun 25, '09", '6/25/2009', 'thursday june 25 2009', 'Thu, 25 Jun 2009',
  'June 25th, 2009', '25 jun 09', 'the 25th of june 2009', '2009 June 25',
];
/** Inputs outside every format, whose outputs the prose quotes. */
export const OUTSIDE = ['2009-06-25', '25/06/2009'];
/** The output's parts (character ranges of YYYY-MM-DD). */
const PARTS = [['year', 0, 4], ['month', 5, 7], ['day', 8, 10]];

/** For each part of an ISO output, the input characters its digits look at most (each digit's largest α). */
export function partsRead(t) {
  if (t.output.length !== 10) return [];
  const n = t.alignment.cols;
  return PARTS.map(([name, a, b]) => {
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = a; i < b; i++) {
      let best = 0;
      for (let j = 1; j < n; j++) if (t.alignment.data[i * n + j] > t.alignment.data[i * n + best]) best = j;
      lo = Math.min(lo, best);
      hi = Math.max(hi, best);
    }
    return { name, from: lo, to: hi, text: t.inputTokens.slice(lo, hi + 1).join('') };
  });
}

/** Why an input does not solve the challenge: it holds the ISO date itself, or the model's output differs from TARGET (in which parts). */
export function datesWhyNot(text, output) {
  if (text.includes(TARGET)) return `the input holds ${TARGET} itself: write the date the way a person would.`;
  const wrong = output.length === TARGET.length ? PARTS.filter(([, a, b]) => output.slice(a, b) !== TARGET.slice(a, b)).map(([name]) => name) : [];
  const parts = wrong.length ? `: its ${wrong.length > 1 ? `${wrong.slice(0, -1).join(', ')} and ${wrong.at(-1)} differ` : `${wrong[0]} differs`}` : '';
  return `the model outputs ${output || 'nothing'}, not ${TARGET}${parts}.`;
}

export function mountDates(root, { models, manifest }) {
  const spec = manifest.models.dates;
  const model = models.dates;
  const ev = model.evaluate({ split: 'test', count: manifest.evalCount });
  quote('ch6.acc', ev.sequenceAccuracy, percent(ev.sequenceAccuracy));
  quote('ch6.count', manifest.evalCount, String(manifest.evalCount));
  quote('ch6.steps', spec.steps, spec.steps.toLocaleString('en'));
  quote('ch6.hidden', spec.options.hidden, String(spec.options.hidden));
  const samples = model.examples({ split: 'test', count: 3, seed: 5 });
  quote('ch6.samples', samples.map((s) => s.input), samples.map((s) => `“${s.input}”`).join(', '));
  const years = model.examples({ split: 'train', count: 1000, seed: 3 }).map((s) => Number(s.output.slice(0, 4)));
  const [y0, y1] = [Math.min(...years), Math.max(...years)];
  quote('ch6.years', [y0, y1], `${y0} to ${y1}`);
  quote('ch6.formatCount', FORMATS.length, String(FORMATS.length));
  const outside = OUTSIDE.map((d) => [d, model.translate(d).output]);
  quote('ch6.outside', outside, outside.map(([d, o]) => `${d} gives ${o}`).join(', '));

  const input = root.querySelector('[data-role=input]');
  input.value = EXAMPLE;
  const format = root.querySelector('[data-role=format]');
  format.replaceChildren(...FORMATS.map((f) => h('option', { value: f, textContent: f })));
  format.value = EXAMPLE;
  format.addEventListener('change', () => { input.value = format.value; update(); });
  const reads = root.querySelector('[data-role=reads]');
  const output = root.querySelector('[data-role=output]');
  const hm = createHeatmap({ id: 'ch6-alignment', label: 'Alignment of the dates model: output characters by input characters', axes: 'output ↓ input →' });
  root.querySelector('[data-role=alignment]').append(hm.el);
  const link = root.querySelector('[data-role=open-lab]');
  const challenge = createChallenge(root.querySelector('[data-role=challenge]'), 'dates',
    `Write the last day of 1999 in a human format (not ISO) so that the model outputs ${TARGET}.`);
  const show = (t) => (t === ' ' ? '␣' : t);

  function update() {
    const text = input.value;
    let t;
    try {
      t = model.translate(text);
    } catch (err) {
      setText(output, `(${err.message})`);
      setText(reads, '');
      input.setAttribute('aria-invalid', 'true');
      challenge.check(false, `the model cannot read this input (${err.message}).`);
      return;
    }
    input.setAttribute('aria-invalid', 'false');
    setText(output, t.output || '(nothing)');
    const parts = partsRead(t);
    setText(reads, parts.length ? `Each output digit's largest weight: ${parts.map((p) => `the ${p.name} reads “${p.text}”`).join(', ')}.` : '');
    hm.update(t.alignment, {
      rowLabels: t.outputTokens.map(show), colLabels: t.inputTokens.map(show), kind: 'unit', legend: 'attention weight α', maxCell: 26, showValues: false,
      describe: (i, j) => ({
        title: `output “${show(t.outputTokens[i])}” looks at “${show(t.inputTokens[j])}” (input ${j})`,
        lines: [`α = ${fixed(t.alignment.data[i * t.alignment.cols + j], 3)}`],
      }),
    });
    link.href = labLink(labFieldsFor(spec, { text: text.slice(0, 64) }));
    challenge.check(t.output === TARGET && !text.includes(TARGET), datesWhyNot(text, t.output));
  }
  input.addEventListener('input', update);
  update();
}
