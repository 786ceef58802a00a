// The example course page: embeds a playground state, a lab family and two Learn
// widgets from attnlab hosted at ?attnlab=URL (default: the folder above this one),
// and lists the messages they send. `npm start` serves it on a second port, so the
// widgets are on another origin, as they would be inside a university's site or an LMS.
import { embed } from '../embed/embed.js';

const WEIGHTS = '#ver=2&mask=causal&temperature=0.5';
const SECOND = '#ver=2&mask=none&temperature=2';

/** Where attnlab is hosted: ?attnlab= when it is an http(s) URL, else this site's own copy. */
function attnlabBase() {
  const given = new URLSearchParams(location.search).get('attnlab');
  try {
    const url = new URL(given ?? '../', location.href);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.href;
  } catch { /* not a URL: the default */ }
  return new URL('../', location.href).href;
}

const log = document.getElementById('log');
const results = document.getElementById('results');
const solved = new Map(); // "chapter/widget" -> { solved, attempts }

/** One line of the log: text only (the messages were checked by embed(), and are shown as text, never as HTML). */
function note(label, message) {
  const { type, subject, ...fields } = message;
  const text = Object.entries(fields).map(([k, v]) => `${k}: ${typeof v === 'string' && v.length > 60 ? `${v.slice(0, 57)}…` : v}`).join(', ');
  const li = document.createElement('li');
  li.textContent = `${label} · ${type ?? subject}${text ? ` (${text})` : ''}`;
  li.dataset.type = type ?? subject;
  log.prepend(li);
  while (log.children.length > 60) log.lastChild.remove();
}

function showResults() {
  results.textContent = [...solved].map(([name, r]) => `Chapter ${name}: ${r.solved ? 'solved' : 'not solved yet'} after ${r.attempts} ${r.attempts === 1 ? 'attempt' : 'attempts'}`).join('. ') || 'No challenge answered yet.';
}

const base = attnlabBase();
const origin = location.origin;
const widgets = {};
for (const [id, widget, label, state] of [
  ['w-playground', 'playground/weights', 'Weights', WEIGHTS],
  ['w-lab', 'lab/seq2seq', 'Lab', ''],
  ['w-dot', 'learn/2/dot', 'Dot product', ''],
  ['w-induction', 'learn/9/induction', 'Induction', ''],
]) {
  widgets[id] = embed(document.getElementById(id), {
    widget, base, state, origin, title: `attnlab: ${label}`,
    onMessage: (message) => {
      note(label, message);
      if (message.type === 'attnlab:challenge') {
        solved.set(`${message.chapter} (${message.widget})`, { solved: message.solved, attempts: message.attempts });
        showResults();
      }
    },
  });
  widgets[id].iframe.loading = 'eager';
}
document.getElementById('set-state').addEventListener('click', () => widgets['w-playground'].set(SECOND));
window.course = widgets;
