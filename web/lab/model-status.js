// The run bar's words about the model in hand: pretrained (what it does, how
// well), untrained (random weights: its output is noise), or trained here; the
// step and accuracy while training; the model kept from before the last new
// one ("Back to it"); the run's event as it happens (an induction head formed),
// said once to screen readers, with a link to where it shows; and the error box, in the learner's words with the
// engine's message under Details (messages.js).
import { byId, h, setHidden, setText } from '../ui/dom.js';
import { fixed } from '../ui/format.js';
import { explain } from './messages.js';
import { describePretrained } from './pretrained.js';

/** What to say next to an output the model made at `step` (0: untrained). */
export const UNTRAINED_NOTE = '(untrained model: random weights, so this is noise; press ▶ Train)';

export function createModelStatus() {
  const status = byId('model-status');
  const errorBox = byId('error');
  const accText = (session) => {
    // the last evaluation: a seq2seq model's whole sequences right, a transformer's scored tokens
    const last = session.lastEval ? session.lastEval.sequenceAccuracy ?? session.lastEval.accuracy : undefined;
    const acc = session.accuracy[session.accuracy.length - 1] ?? (Number.isFinite(last) ? { value: last } : null);
    return acc ? `accuracy ${fixed(100 * acc.value, 1)}%` : 'accuracy –';
  };

  return {
    /**
     * The model in hand, of `family`: `origin` { pretrained } (manifest pick), { file } (a loaded file) or {} (made here);
     * `canOpenPretrained`: a pretrained model exists for the task (offered when this one is not it).
     */
    update(session, state, family, origin, canOpenPretrained) {
      const modelName = family.modelName;
      let text;
      if (origin.pretrained) {
        const more = session.steps - origin.pretrained.spec.steps;
        text = describePretrained(origin.pretrained, family.pretrainedName(origin.pretrained.settings)) + (more > 0 ? ` You trained it ${more.toLocaleString('en')} steps more.` : '');
      } else if (session.steps === 0) {
        text = `Untrained model (${modelName(state)}): its weights are random, so its output is noise and its attention flat. Press ▶ Train to watch it learn.`;
      } else if (origin.file) {
        text = `Loaded from ${origin.file} (${modelName(state)}): ${session.steps.toLocaleString('en')} steps trained.`;
      } else {
        text = `Trained here from scratch (${modelName(state)}): ${session.steps.toLocaleString('en')} steps.`;
      }
      setText(status, text);
      setHidden(byId('pretrained'), !canOpenPretrained || Boolean(origin.pretrained));
      setText(byId('run-acc'), accText(session));
    },
    /**
     * The run bar's step, out of where the run stops (`length`: the family's run length, null: no end),
     * and the run's event (the family's runNote), rewritten only when it changes: it is announced.
     */
    run(session, length) {
      const steps = session.steps;
      const end = session.playing && session.until ? session.until : length ? Math.max(length, Math.ceil(steps / length) * length) : null;
      byId('run-step').replaceChildren(`step ${steps.toLocaleString('en')}`, ...(end ? [h('span', { className: 'run-of', textContent: ` of ${end.toLocaleString('en')}` })] : []));
      const note = session.model ? session.family?.runNote(session) : null;
      const box = byId('run-event');
      if ((box.dataset.text ?? '') === (note?.text ?? '')) return;
      box.dataset.text = note?.text ?? '';
      box.replaceChildren(...(note ? [h('a', { href: note.href, title: note.title, textContent: note.text, dataset: { testid: 'run-event-link' } })] : []));
    },
    /** The model kept from before (null: none), with the sentence naming it. */
    previous(kept) {
      setHidden(byId('previous'), !kept);
      setText(byId('previous-text'), kept ? `Your previous model is kept (${kept.label}).` : '');
    },
    /** Shows an error (null hides it): what happened in the learner's words, the engine's message under Details. */
    error(err, context = {}) {
      errorBox.hidden = !err;
      if (!err) { errorBox.replaceChildren(); return; }
      const { text, detail } = err.learner ? { text: err.learner, detail: err.detail } : explain(err, context);
      errorBox.replaceChildren(h('p', { textContent: text }),
        h('details', {}, h('summary', { textContent: 'Details' }), h('code', { textContent: detail })));
    },
  };
}
