// Embed mode: a page opened with ?embed shows one widget alone (no header, navigation
// or footer), sized to its content, and talks to the page that frames it by
// window.postMessage (the protocol: web/embed/protocol.js, docs/embedding.md).
//
//   const params = embedParams()        the page's ?embed parameters, or null (not embedded)
//   stateLink()                         the page's state link: its #hash and the model its query chose, no embed parameters
//   const widget = startEmbed(params, { widget, targets, onSet })
//     widget    its name, sent in attnlab:ready ('playground/weights', 'learn/9/induction')
//     targets   the elements shown; every other part of the page is hidden (CSS, so parts drawn later stay hidden)
//     onSet(hash, link)  loads a state link (attnlab:set); the default replaces the hash and the
//               model's query fields with the link's (protocol.js withLinkQuery) and reloads
//   widget.ready()          sends attnlab:ready (once the widget is drawn) and starts the resize messages
//   widget.state(link)      sends attnlab:state: the learner changed the state
//   widget.challenge({ chapter, widget, solved, attempts })   sends attnlab:challenge
//   widget.threads(info, where)  a line in the first target saying how many threads the training uses,
//                           and that more would be used where the host allows it
//
// Messages from any window but the parent, or from another origin than &origin=, are
// ignored; so is every message that fails the protocol's checks, with a console note.
// Nothing from a message reaches the DOM: a link is only ever decoded by the page's codec.
import { VERSION, checkToWidget, hashOf, linkQuery, readEmbedParams, withLinkQuery } from '../embed/protocol.js';
import { h } from './dom.js';

/** This page's embed parameters, or null when it is not embedded (web/embed-mode.js has marked the document already). */
export function embedParams() {
  return readEmbedParams(location.search);
}

/**
 * The page's state link, as attnlab:state sends it and the Embed button's snippet opens it: the
 * #hash, and the hub model the query chose (?repo=…&revision=…&hub=…, web/ui/model-link.js);
 * none of the embed parameters.
 */
export function stateLink() {
  const model = linkQuery(location.href);
  return `${location.origin}${location.pathname}${model ? `?${model}` : ''}${location.hash}`;
}

/** Shows only `targets`: they and their ancestors are marked, every other element is hidden by base.css. */
function showOnly(targets) {
  for (const t of targets) {
    t.classList.add('embed-target');
    for (let p = t.parentElement; p && p !== document.documentElement; p = p.parentElement) p.classList.add('embed-path');
  }
  document.documentElement.classList.remove('embed-pending');
}

/** "one thread: ..." or "N threads", and what the host page could change. */
export function threadsNote({ threads = 1, threadsReason = null } = {}, where = 'Training') {
  if (threads > 1) return `${where} uses ${threads} threads (this page is cross-origin isolated).`;
  if (globalThis.crossOriginIsolated === false) {
    return `${where} runs on one thread: the page around this widget is not cross-origin isolated. It would use more cores `
      + 'if that page were (headers Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy) and its frame had allow="cross-origin-isolated".';
  }
  return `${where} runs on one thread${threadsReason ? `: ${threadsReason}` : ''}.`;
}

export function startEmbed(params, { widget, targets, onSet }) {
  showOnly(targets);
  const parent = window.parent !== window ? window.parent : null;
  // a bad &origin= sends nothing and accepts nothing: the author asked for a restriction the page cannot honour
  const closed = params.origin === false;
  if (params.problems.length) console.warn(`attnlab: embed parameters not understood, ignored: ${params.problems.join(', ')}`);
  const post = (message) => {
    if (!parent || closed) return;
    parent.postMessage(message, params.origin || '*');
  };
  const set = onSet ?? ((hash, link) => {
    history.replaceState(null, '', `${location.pathname}${withLinkQuery(location.search, link)}${hash}`);
    location.reload();
  });

  window.addEventListener('message', (event) => {
    if (event.source !== parent || !parent) return; // another frame's or our own messages are not for us
    const where = `from ${String(event.origin).slice(0, 80)}`;
    if (closed || (params.origin && event.origin !== params.origin)) {
      console.warn(`attnlab: ignored a message ${where}: only ${params.origin || 'no origin (a bad &origin=)'} may send messages`);
      return;
    }
    const why = checkToWidget(event.data);
    if (why) {
      console.warn(`attnlab: ignored a message ${where}: ${why}`);
      return;
    }
    set(hashOf(event.data.link), event.data.link);
  });

  let lastHeight = -1;
  const sendHeight = () => {
    const height = Math.ceil(document.body.getBoundingClientRect().height);
    if (height === lastHeight) return;
    lastHeight = height;
    post({ type: 'attnlab:resize', height });
    if (params.lti) post({ subject: 'lti.frameResize', height });
  };
  let readySent = false;
  return {
    ready() {
      if (readySent) return;
      readySent = true;
      document.body.dataset.embedReady = String(Math.round(performance.now()));
      post({ type: 'attnlab:ready', widget, version: VERSION });
      sendHeight();
      new ResizeObserver(sendHeight).observe(document.body);
      // a frame out of view skips its rendering updates, and with them the observer: a timer catches those changes
      setInterval(sendHeight, 1000);
    },
    state(link) {
      post({ type: 'attnlab:state', link });
    },
    challenge({ chapter, widget: name, solved, attempts }) {
      post({ type: 'attnlab:challenge', chapter, widget: name, solved, attempts });
    },
    threads(info, where) {
      let line = document.querySelector('.embed-threads');
      if (!line) {
        line = h('p', { className: 'hint embed-threads', dataset: { testid: 'embed-threads' } });
        targets[0].prepend(line);
      }
      line.textContent = threadsNote(info, where);
    },
  };
}
