// A chapter's heavy figures (whole evaluations over the test images) are computed when the
// chapter comes near the view, or is opened from the contents or a link, not at page load.
// Until they are in, each chapter says so in a status line under its heading and each
// figure still to come reads "computing…"; the sections are aria-busy meanwhile, and
// data-figures on each reads pending, computing, then ready (or error).
import { h, setText } from '../ui/dom.js';

/** How far ahead of the view a figure starts its chapter computing: half a screen. */
const AHEAD = '50% 0px';

/**
 * Runs `compute` (async) once, the first time a figure of `sections` still to come (or the
 * note under a heading) comes within half a screen of the view; every section shows the state meanwhile. Returns { start }: starts it now, resolves when done.
 */
export function computeWhenNear(sections, compute) {
  const notes = sections.map((section) => {
    const note = h('p', { className: 'figures-note', textContent: 'The figures quoted in this chapter are computed when you reach it.', attrs: { role: 'status' } });
    section.querySelector('h2').after(note);
    return note;
  });
  // the prose's figures still to come: each says so where it stands, not only under the heading
  const pending = sections.flatMap((section) => [...section.querySelectorAll('[data-num]')].filter((el) => el.textContent === '…'));
  for (const el of pending) el.classList.add('figure-pending');
  const mark = (state, text) => {
    for (const el of pending) {
      if (state === 'computing' && el.textContent === '…') setText(el, 'computing…');
      // a figure its chapter could not compute (that chapter says why) does not stay "computing…"
      if ((state === 'ready' || state === 'error') && el.textContent === 'computing…') setText(el, 'not available');
      if (state === 'ready') el.classList.remove('figure-pending');
    }
    for (const [i, section] of sections.entries()) {
      section.dataset.figures = state;
      section.setAttribute('aria-busy', String(state === 'computing'));
      setText(notes[i], text);
      notes[i].hidden = state === 'ready';
    }
  };
  mark('pending', notes[0].textContent);
  let running = null;
  const observer = new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) start().catch((err) => console.error(err)); }, { rootMargin: AHEAD });
  function start() {
    if (running) return running;
    observer.disconnect();
    mark('computing', 'Computing the figures quoted in this chapter (a few seconds)…');
    running = compute().then(() => mark('ready', ''), (err) => {
      mark('error', `The figures quoted in this chapter could not be computed (${err.message}).`);
      throw err;
    });
    return running;
  }
  // the figures themselves (and the notes) are watched, not the whole sections: a reader at the
  // next chapter's top, just past chapter 8's end, does not start them
  for (const el of [...notes, ...pending]) observer.observe(el);
  return { start };
}
