// The Embed button (beside Share): a dialog with the <iframe> snippet that shows one
// widget in the current state on another site, sized as the widget is now, with
// allow="cross-origin-isolated" (so an isolated host page gives it threads).
//
//   const button = embedButton({ widget, measure, label, state })
//     widget    a widget name (web/embed/protocol.js), or a function returning one
//     measure() the element whose current size the snippet's width and height take
//     label     the button's accessible name (default "Embed")
//     state()   the state link the widget opens on (default the page's, embed.js stateLink(): the
//               playground's and the lab's #hash, and the hub model the lab's query chose; '' where
//               the hash is only a place on the page, as on Learn)
//   embedSnippet({ src, width, height, title }) -> the snippet's text
import { widgetUrl } from '../embed/protocol.js';
import { h } from './dom.js';
import { stateLink } from './embed.js';

const escapeAttr = (s) => String(s).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** The <iframe> snippet for one widget. */
export function embedSnippet({ src, width, height, title }) {
  return `<iframe src="${escapeAttr(src)}" width="${width}" height="${height}" title="${escapeAttr(title)}" `
    + 'allow="cross-origin-isolated" loading="lazy"></iframe>';
}

let dialog = null;
function openDialog(snippet, name) {
  if (!dialog) {
    const area = h('textarea', { id: 'embed-snippet', readOnly: true, rows: 5, spellcheck: false, dataset: { testid: 'embed-snippet' } });
    const status = h('p', { className: 'hint', attrs: { 'aria-live': 'polite' } });
    const copy = h('button', { type: 'button', className: 'primary', textContent: 'Copy' });
    const close = h('button', { type: 'button', textContent: 'Close' });
    const heading = h('h2', { id: 'embed-title' });
    const el = h('dialog', { className: 'embed-dialog', attrs: { 'aria-labelledby': 'embed-title' }, dataset: { testid: 'embed-dialog' } },
      heading,
      h('p', { className: 'hint', textContent: 'Paste this into your page. The frame shows this widget alone, in this state, and tells your page its height, changes and challenge results (docs/embedding.md).' }),
      h('label', { htmlFor: 'embed-snippet', textContent: 'HTML to paste' }), area, status,
      h('div', { className: 'field-row' }, copy, close));
    copy.addEventListener('click', async () => {
      area.select();
      try {
        await navigator.clipboard.writeText(area.value);
        status.textContent = 'Copied.';
      } catch {
        status.textContent = 'Select the text and copy it (Ctrl+C).';
      }
    });
    close.addEventListener('click', () => el.close());
    document.body.append(el);
    dialog = { el, area, status, heading };
  }
  dialog.heading.textContent = `Embed ${name}`;
  dialog.area.value = snippet;
  dialog.status.textContent = '';
  dialog.el.showModal();
  dialog.area.focus();
  dialog.area.select();
}

export function embedButton({ widget, measure, label = 'Embed', title = 'attnlab', state = stateLink }) {
  const button = h('button', {
    type: 'button', className: 'embed-button', textContent: 'Embed',
    title: 'The HTML that shows this widget, in this state, on another site', attrs: { 'aria-label': label },
  });
  button.addEventListener('click', () => {
    const name = typeof widget === 'function' ? widget() : widget;
    const box = measure().getBoundingClientRect();
    const src = widgetUrl(name, { base: location.href, state: state() });
    const snippet = embedSnippet({ src, width: Math.min(1200, Math.ceil(box.width)), height: Math.ceil(box.height) + 16, title: `${title}: ${name}` });
    openDialog(snippet, name);
  });
  return button;
}
