// Learn's widgets, embedded (?embed&chapter=N&widget=NAME): each chapter's live widgets
// by name (docs/embedding.md lists them), the one asked for mounted alone, with its
// chapter's challenge where the widget is the one the challenge is about; every answer
// to it is sent as attnlab:challenge. Off embed mode, each named widget gets an Embed button.
import { startEmbed } from '../ui/embed.js';
import { h } from '../ui/dom.js';
import { embedButton } from '../ui/embed-button.js';
import { onAnswer } from './progress.js';

/**
 * Each chapter's widgets (by the chapter's id, ch-ID in learn.html): a widget is the
 * chapter's n-th .widget (a number) or a selector, with its challenge when `challenge`.
 */
export const WIDGETS = {
  bottleneck: { chart: { at: 0 }, reverse: { at: 1, challenge: true } },
  dot: { dot: { at: 0, challenge: true } },
  average: { average: { at: 0, challenge: true } },
  scores: { cards: { at: '.score-grid' }, 'sqrt-d': { at: 0, challenge: true } },
  self: { self: { at: 0, challenge: true } },
  dates: { dates: { at: 0, challenge: true } },
  kinds: { explicit: { at: 0 }, text: { at: 1, challenge: true }, 'soft-hard': { at: 2 } },
  images: { models: { at: 0 }, draw: { at: 1, challenge: true }, retina: { at: '[data-role=retina]' } },
  transformer: { order: { at: 0 }, 'sqrt-d': { at: 1 }, induction: { at: 2, challenge: true, trains: true } },
};

/** The chapters in page order: chapter N is the N-th (section.chapter with an id ch-ID). */
export const chapters = () => [...document.querySelectorAll('section.chapter[id^="ch-"]')].map((s) => s.id.slice(3));

/** The elements a widget shows: the widget, and its chapter's challenge when it is the challenge's widget. */
function elementsOf(id, spec) {
  const section = document.getElementById(`ch-${id}`);
  const el = typeof spec.at === 'number' ? section.querySelectorAll(':scope > .widget')[spec.at] : section.querySelector(spec.at);
  return [el, ...(spec.challenge ? [section.querySelector(':scope > [data-role=challenge]')] : [])].filter(Boolean);
}

/** The chapter id and widget an embed link names, or null with the reason. */
export function pickWidget(params) {
  const list = chapters();
  const id = list[(params.chapter ?? 0) - 1];
  if (!id) return { error: `there is no chapter ${params.chapter ?? '(none given)'}: chapters 1 to ${list.length}` };
  const names = Object.keys(WIDGETS[id] ?? {});
  if (!names.includes(params.widget)) return { error: `chapter ${params.chapter} has no widget "${params.widget ?? ''}" (${names.join(', ') || 'none yet'})` };
  return { id, name: params.widget, spec: WIDGETS[id][params.widget] };
}

/**
 * Embed mode for one Learn widget: shows it alone, counts the learner's answers to its
 * challenge (an answer is a check that follows their own input) and sends each.
 */
export function startLearnEmbed(params, { id, name, spec }) {
  const chapter = chapters().indexOf(id) + 1;
  const widget = startEmbed(params, { widget: `learn/${chapter}/${name}`, targets: elementsOf(id, spec) });
  if (spec.challenge) {
    let acted = false;
    let attempts = 0;
    for (const type of ['input', 'change', 'pointerup', 'keydown']) document.addEventListener(type, (e) => { if (e.isTrusted) acted = true; }, true);
    onAnswer((answer) => {
      if (answer.id !== id || !acted) return;
      acted = false;
      attempts++;
      widget.challenge({ chapter, widget: name, solved: answer.solved, attempts });
    });
  }
  return {
    ...widget,
    /** The training widgets say how many threads they train on (on an isolated host, as many as it allows). */
    trained(engine) {
      if (spec.trains) widget.threads(engine, 'Training');
    },
  };
}

/** An Embed button on every named widget of the page. */
export function addEmbedButtons() {
  chapters().forEach((id, k) => {
    for (const [name, spec] of Object.entries(WIDGETS[id] ?? {})) {
      const [el] = elementsOf(id, spec);
      if (!el) continue;
      // Learn's #hash is where the reader is (#ch-transformer), not a widget's state: the snippet carries none
      const button = embedButton({ widget: `learn/${k + 1}/${name}`, measure: () => el, label: `Embed this widget (chapter ${k + 1}, ${name}) in another page`, title: 'attnlab Learn', state: () => '' });
      button.classList.add('small');
      el.append(h('p', { className: 'embed-row' }, button));
    }
  });
}
