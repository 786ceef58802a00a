// Chapter 8's ablation tables: image models (sizes from their files, accuracy
// with its 95% interval) and a button that evaluates each again with every
// attention map made uniform (the retina: uniformly random glimpses), on the same
// test images as their own accuracy. Used twice: the grid's soft and hard models,
// and the grid's hard model against the retina.
//   const table = mountAblation(box, { prefix, caption, head, action, rows: [{ name, label, model }] })
//     box     the element the table, its button, progress bar and readout are made in
//     prefix  the quoted figures' keys (`${prefix}.uniform.<name>`, `${prefix}.ablationApart`) and
//             the test ids (`${prefix}-models`, `-ablate`, `-ablate-progress`, `-ablate-readout`)
//     caption, head (the first column's heading), action (the button's text)
//   table.own({ <name>: accuracy }, count)   the models' own accuracies on `count` test images
import { h, setText } from '../ui/dom.js';
import { percent, quote } from './numbers.js';
import { ablationText, interval, intervalText } from './vision-measures.js';

/** What the uniform ablation says about a set of models, in words (every one falls below its own interval, or not). */
export function ablationVerdict(count, apart) {
  const all = count === 2 ? 'Both models’' : 'Every model’s';
  return apart ? `${all} answers come through where they look: with uniform attention each falls below its own interval.`
    : 'At least one model stays within its interval without looking: its answer does not come only through its attention.';
}

export function mountAblation(box, { prefix, caption, head, action, rows: models }) {
  const id = (what) => ({ testid: `${prefix}-${what}` });
  const body = h('tbody', { dataset: id('models') });
  const button = h('button', { type: 'button', className: 'primary', textContent: action, dataset: id('ablate') });
  const bar = h('progress', { max: 1, value: 0, hidden: true, dataset: id('ablate-progress'), attrs: { 'aria-label': `${action}: progress` } });
  const readout = h('p', { textContent: 'Measuring the models’ own accuracy…', dataset: id('ablate-readout'), attrs: { 'aria-live': 'polite' } });
  const th = (text) => h('th', { scope: 'col', textContent: text });
  box.replaceChildren(
    h('table', { className: 'weights ablation' }, h('caption', { textContent: caption }),
      h('thead', {}, h('tr', {}, th(head), th('size'), th('its own'), th('uniform'))), body),
    h('div', { className: 'field-row' }, button, bar),
    readout,
  );
  const rows = {};
  body.replaceChildren(...models.map(({ name, label, model }) => {
    const cells = { own: h('td', { textContent: '…' }), uniform: h('td', { textContent: '—' }) };
    rows[name] = cells;
    return h('tr', { dataset: { model: name } }, h('th', { scope: 'row', textContent: label ?? name }),
      h('td', {}, `${model.config.hidden} hidden units`, h('br'), h('small', { textContent: `${model.config.parameters.toLocaleString('en')} parameters` })),
      cells.own, cells.uniform);
  }));
  // the interval under the accuracy, so the table fits a phone's width
  const span = (v) => (v * 100).toFixed(1);
  const cellText = (c) => [percent(c.p), h('br'), h('small', { textContent: `${span(c.lo)}–${span(c.hi)}%` })];
  let own = null;
  let count = 0;
  button.disabled = true;
  button.addEventListener('click', () => run());

  async function run() {
    button.disabled = true;
    bar.hidden = false;
    bar.value = 0;
    readout.dataset.state = 'running';
    const uniform = {};
    const texts = [];
    // one evaluation a task, so the page answers input in between
    for (const [k, { name, model }] of models.entries()) {
      setText(readout, `Evaluating the ${name} model with uniform attention (${k + 1} of ${models.length})…`);
      await new Promise((ok) => setTimeout(ok, 0));
      const acc = model.evaluate({ split: 'test', count, attention: 'uniform' }).accuracy;
      uniform[name] = interval(acc, count);
      quote(`${prefix}.uniform.${name}`, acc, intervalText(uniform[name]));
      rows[name].uniform.replaceChildren(...cellText(uniform[name]));
      texts.push(ablationText(name, own[name], uniform[name]));
      bar.value = (k + 1) / models.length;
    }
    const apart = models.every(({ name }) => uniform[name].hi < own[name].lo);
    const verdict = ablationVerdict(models.length, apart);
    quote(`${prefix}.ablationApart`, apart, verdict);
    readout.replaceChildren(`With uniform attention on the same ${count.toLocaleString('en')} test images, ${texts.join('; ')}. ${verdict}`);
    readout.dataset.state = 'done';
    bar.hidden = true;
    button.disabled = false;
  }

  return {
    own(acc, n) {
      count = n;
      own = Object.fromEntries(models.map(({ name }) => [name, interval(acc[name], n)]));
      for (const { name } of models) rows[name].own.replaceChildren(...cellText(own[name]));
      button.disabled = false;
      setText(readout, `Press the button to evaluate ${models.length === 2 ? 'both' : 'the'} models on the same ${n.toLocaleString('en')} test images with uniform attention.`);
    },
  };
}
