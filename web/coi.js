// Makes a page cross-origin isolated on a static host that cannot send COOP and
// COEP (GitHub Pages and the like): registers coi-sw.js, which adds them to every
// same-origin response, and reloads the page once when the worker first takes
// control, so the reloaded page is isolated and the engine may use threads.
// Does nothing where the page is already isolated (a host that sends the
// headers, such as scripts/serve.mjs), where service workers are unavailable
// (plain HTTP off localhost, a browser that blocks them) or where sessionStorage
// is, since the one-reload guard lives there: it never reloads twice in a row.
// Nor in a frame (an embedded widget): a framed page is isolated only when the page
// around it is and grants allow="cross-origin-isolated"; no worker of ours changes that.
(() => {
  if (window.self !== window.top) return;
  const KEY = 'attnlab.coi-reloaded';
  let storage;
  try {
    storage = window.sessionStorage;
    if (window.crossOriginIsolated) storage.removeItem(KEY);
  } catch {
    return; // no guard against reloading in a loop: stay on one thread
  }
  if (window.crossOriginIsolated || !window.isSecureContext || !('serviceWorker' in navigator)) return;
  // reloaded once already and still not isolated: the worker cannot help here, so
  // no more reloads in this tab (the mark stays until a load is isolated)
  if (storage.getItem(KEY)) return;
  const reload = () => {
    storage.setItem(KEY, '1');
    window.location.reload();
  };
  // relative to this script, so the worker's scope is the site's folder, whatever path it is hosted under
  const script = new URL('coi-sw.js', document.currentScript?.src ?? window.location.href);
  // controlled, yet not isolated: this response bypassed the worker (it was installed after the page loaded)
  if (navigator.serviceWorker.controller) {
    reload();
    return;
  }
  navigator.serviceWorker.addEventListener('controllerchange', reload, { once: true });
  navigator.serviceWorker.register(script).catch(() => {
    // a host that does not serve the worker, or a browser that refuses it: stay on one thread
  });
})();
