// The notice bar (role="status"): bad links, import errors, confirmations. Text only.
//   const notice = createNotice(el)   el: any element (usually <div class="notice" role="status" hidden>);
//                                     the text span and a Dismiss button are added if missing
//   notice.show(message, kind)        kind 'info' | 'error' (data-kind, styled by base.css)
//   notice.linkFields(ignored)        the URL-state codec's ignored list -> one sentence naming each field
//   notice.hide()
import { h } from './dom.js';

/** The sentence for the fields a link could not use (see url-state.js decode()). */
export function ignoredSentence(ignored) {
  if (!ignored.length) return '';
  const names = ignored.map((f) => (f.reason ? `${f.name} (${f.reason})` : f.name));
  return `Part of the link could not be used, so these settings keep their defaults: ${names.join('; ')}.`;
}

export function createNotice(el) {
  el.classList.add('notice');
  el.setAttribute('role', 'status');
  let text = el.querySelector('.notice-text');
  if (!text) {
    text = h('span', { className: 'notice-text' });
    const dismiss = h('button', { type: 'button', className: 'small', textContent: 'Dismiss', attrs: { 'aria-label': 'Dismiss the notice' } });
    el.replaceChildren(text, dismiss);
  }
  el.querySelector('button').addEventListener('click', () => { el.hidden = true; });
  const api = {
    show(message, kind = 'info') {
      el.hidden = !message;
      el.dataset.kind = kind;
      text.textContent = message;
    },
    linkFields(ignored) {
      if (ignored.length) api.show(ignoredSentence(ignored), 'error');
    },
    hide() { el.hidden = true; },
  };
  return api;
}
