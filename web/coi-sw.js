// A service worker for static hosts that cannot set headers: it re-serves every
// same-origin response with Cross-Origin-Opener-Policy and -Embedder-Policy, so
// the pages become cross-origin isolated and the engine may use threads
// (SharedArrayBuffer). Registered by coi.js; harmless where the host already
// sends the headers (the page is isolated and coi.js never registers it).
// Cross-origin requests pass through untouched (the pages load none).
const ISOLATION = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};
/** Statuses whose response may carry no body. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

async function isolate(request) {
  const response = await fetch(request);
  // opaque and redirect responses cannot be read or rebuilt: hand them on as they are
  if (response.type === 'opaque' || response.type === 'opaqueredirect' || response.status === 0) return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(ISOLATION)) headers.set(name, value);
  return new Response(NULL_BODY.has(response.status) ? null : response.body, {
    status: response.status, statusText: response.statusText, headers,
  });
}

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (new URL(request.url).origin !== self.location.origin) return;
  // a request only the cache may answer, made outside same-origin mode, throws if fetched again
  if (request.cache === 'only-if-cached' && request.mode !== 'same-origin') return;
  event.respondWith(isolate(request));
});
