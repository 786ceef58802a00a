// Chapter 6, attention in seq2seq: the pretrained dates model; the reader types
// a date in any of its formats and sees the output and the alignment, then opens
// the lab with the same model settings and input to train one.
import { setText } from '../ui/dom.js';
import { createHeatmap } from '../ui/heatmap.js';
import { fixed } from '../ui/format.js';
import { createChallenge } from './progress.js';
import { labFieldsFor, labLink } from './links.js';
import { percent, quote } from './numbers.js';

export const EXAMPLE = '25th of June, 2009';
export const TARGET = '1999-12-31';

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

  const input = root.querySelector('[data-role=input]');
  input.value = EXAMPLE;
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
      input.setAttribute('aria-invalid', 'true');
      return;
    }
    input.setAttribute('aria-invalid', 'false');
    setText(output, t.output || '(nothing)');
    hm.update(t.alignment, {
      rowLabels: t.outputTokens.map(show), colLabels: t.inputTokens.map(show), kind: 'unit', legend: 'attention weight α', maxCell: 26, showValues: false,
      describe: (i, j) => ({
        title: `output “${show(t.outputTokens[i])}” looks at “${show(t.inputTokens[j])}” (input ${j + 1})`,
        lines: [`α = ${fixed(t.alignment.data[i * t.alignment.cols + j], 3)}`],
      }),
    });
    link.href = labLink(labFieldsFor(spec, { text: text.slice(0, 64) }));
    challenge.check(t.output === TARGET && !text.includes(TARGET) && !/^\s*1999-12-31\s*$/.test(text));
  }
  input.addEventListener('input', update);
  update();
}
