// attnlab/embed: puts an attnlab widget in a page (an iframe of a hosted attnlab) and
// hands the page its messages. For course sites built with npm; the plain-HTML way is
// the snippet the Embed button gives (docs/embedding.md).
//
//   import { embed } from 'attnlab/embed';
//   const widget = embed(element, { widget: 'learn/9/induction', base: 'https://example.org/attnlab/',
//     state, origin, lti, title, onMessage: (message) => ... });
//   widget.set(link)     loads a state link in the widget (attnlab:set)
//   widget.destroy()     removes the iframe and stops listening
//   widget.iframe        the iframe element
//
// The iframe's height follows the widget's attnlab:resize messages. Only messages from
// this iframe's window and from attnlab's origin, that pass the protocol's checks, reach
// onMessage; others are ignored with a console note.
import { MAX_LINK, checkFromWidget, hashOf, widgetUrl } from './protocol.js';

export { VERSION, widgetUrl } from './protocol.js';

export function embed(element, options = {}) {
  if (!element || typeof element.append !== 'function') throw new TypeError('embed: expected an element to put the widget in');
  const { widget, base, state = '', origin = null, lti = false, title = null, onMessage = null } = options;
  if (typeof base !== 'string' || !base) throw new TypeError('embed: base: the URL where attnlab is hosted, such as "https://example.org/attnlab/"');
  if (onMessage !== null && typeof onMessage !== 'function') throw new TypeError('embed: onMessage: expected a function');
  const src = widgetUrl(widget, { base: new URL(base, document.baseURI).href, state, origin, lti });
  const target = new URL(src).origin;
  const iframe = document.createElement('iframe');
  iframe.src = src;
  iframe.title = title ?? `attnlab: ${widget}`;
  iframe.allow = 'cross-origin-isolated';
  iframe.loading = 'lazy';
  iframe.width = '100%';
  iframe.height = '360';
  iframe.className = 'attnlab-embed';
  iframe.style.border = '0';
  const listener = (event) => {
    if (event.source !== iframe.contentWindow) return;
    if (event.origin !== target) {
      console.warn(`attnlab embed: ignored a message from ${event.origin}: expected ${target}`);
      return;
    }
    const why = checkFromWidget(event.data);
    if (why) {
      console.warn(`attnlab embed: ignored a message: ${why}`);
      return;
    }
    if (event.data.type === 'attnlab:resize') iframe.height = String(Math.ceil(event.data.height));
    onMessage?.(event.data);
  };
  window.addEventListener('message', listener);
  element.append(iframe);
  return {
    iframe,
    set(link) {
      if (typeof link !== 'string' || link.length > MAX_LINK || hashOf(link) === null) throw new TypeError('set: expected a state link (a URL or "#…")');
      iframe.contentWindow?.postMessage({ type: 'attnlab:set', link }, target);
    },
    destroy() {
      window.removeEventListener('message', listener);
      iframe.remove();
    },
  };
}
