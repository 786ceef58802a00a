// Embed mode, first step: a classic script in each page's head that marks the
// document when its URL has ?embed (the same test as embed/protocol.js), before
// the body is parsed. ui/base.css then keeps everything but the notice out of
// layout until ui/embed.js knows which widget to show: a frame that shows one
// Learn widget no longer lays out the whole article first (about 300 ms).
(() => {
  if (!new URLSearchParams(window.location.search.slice(0, 2048)).has('embed')) return;
  document.documentElement.classList.add('embed', 'embed-pending');
})();
