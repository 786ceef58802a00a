// Embed mode, first step: a classic script in each page's head that marks the
// document when its URL has ?embed (the same test as embed/protocol.js), before
// the body is parsed. ui/base.css then keeps everything but the notice out of
// layout until ui/embed.js knows which widget to show: a frame that shows one
// Learn widget no longer lays out the whole article first (about 300 ms).
// It also starts the page's early fetches (its data-preload: the files the whole
// page reads first), as <link rel=preload> would, but only when the page is not
// embedded: one widget fetches only what it reads (an embedded chapter 9 does not
// read the reverse models, nor the one-thread engine when it trains on more).
(() => {
  const script = document.currentScript;
  if (!new URLSearchParams(window.location.search.slice(0, 2048)).has('embed')) {
    for (const href of (script?.dataset.preload ?? '').split(/\s+/).filter(Boolean)) {
      const link = document.createElement('link');
      Object.assign(link, { rel: 'preload', href, as: 'fetch', crossOrigin: 'anonymous' });
      document.head.append(link);
    }
    return;
  }
  document.documentElement.classList.add('embed', 'embed-pending');
})();
