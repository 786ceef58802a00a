// Each chapter's challenge: a line of text, a status that says why the learner's
// answer does not count yet (from the widget's own check, announced politely to
// screen readers) and turns to a visible success when it passes, and progress kept in localStorage
// only (key "attnlab.learn.progress": { [chapter]: true }). Storage that is
// unavailable (private mode, blocked) leaves progress for this visit only.
import { h } from '../ui/dom.js';

const KEY = 'attnlab.learn.progress';

function readAll() {
  try {
    const v = JSON.parse(localStorage.getItem(KEY) ?? '{}');
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

function writeAll(all) {
  try { localStorage.setItem(KEY, JSON.stringify(all)); } catch { /* progress stays for this visit */ }
}

const listeners = new Set();
/** Calls fn(progress) whenever a challenge is solved. */
export const onProgress = (fn) => listeners.add(fn);
export const progress = () => readAll();
const answers = new Set();
/** Calls fn({ id, solved }) on every check of a challenge: the answer as the widget stands (solved: this answer is right). */
export const onAnswer = (fn) => answers.add(fn);

/**
 * A challenge box in `host` for chapter `id`. challenge.check(ok, why) marks it solved
 * when ok (once solved it stays solved, also after a reload); while it is not, the
 * status reads "Not solved yet: why", `why` saying what the current answer misses.
 */
export function createChallenge(host, id, text) {
  const status = h('p', { className: 'challenge-status', attrs: { 'aria-live': 'polite', 'aria-atomic': 'true' }, dataset: { testid: `challenge-status-${id}` } });
  const box = h('div', { className: 'challenge', dataset: { testid: `challenge-${id}` } },
    h('p', { className: 'challenge-title' }, h('strong', { textContent: 'Try it. ' }), text), status);
  host.append(box);
  const show = (solved, why = '') => {
    box.classList.toggle('solved', solved);
    box.dataset.solved = String(solved);
    const words = solved ? '✓ Solved! Your progress is saved in this browser.' : why ? `Not solved yet: ${why}` : 'Not solved yet.';
    // the same words again are not announced again
    if (status.textContent !== words) status.textContent = words;
  };
  show(Boolean(readAll()[id]));
  return {
    check(ok, why = '') {
      for (const fn of answers) fn({ id, solved: Boolean(ok) });
      if (box.dataset.solved === 'true') return;
      if (!ok) { show(false, why); return; }
      const all = readAll();
      all[id] = true;
      writeAll(all);
      show(true);
      for (const fn of listeners) fn(all);
    },
  };
}
