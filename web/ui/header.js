// The site header every page shows: a skip link (first focusable element), the
// brand, navigation between the pages (the current one marked aria-current) and a
// status line; page-specific buttons go in its actions slot.
//
//   const header = mountHeader({ current, skipTo, tagline, actions = [] })
//     current   'playground' | 'lab' | 'learn' (an id from PAGES)
//     skipTo    id of the page's main content (the skip link's target; it gets tabindex=-1)
//     tagline   short text after the brand;  actions: nodes (buttons) placed on the right
//   header.status(text)   the status line (e.g. which engine build is running); aria-live
//   header.engine(info, where)  the status line for a loaded engine ({ simd, threads, threadsReason }):
//                         its build and thread count; the reason for one thread in the tooltip
// Inserted at the start of <body>; styled by base.css (.site-header, .skip).
import { h } from './dom.js';

export const PAGES = [
  { id: 'playground', href: 'index.html', label: 'Playground' },
  { id: 'lab', href: 'lab.html', label: 'Training lab' },
  { id: 'learn', href: 'learn.html', label: 'Learn' },
];

export function mountHeader({ current, skipTo, tagline = '', actions = [] }) {
  const target = document.getElementById(skipTo);
  if (target && !target.hasAttribute('tabindex')) target.tabIndex = -1;
  const skip = h('a', { className: 'skip', href: `#${skipTo}`, textContent: 'Skip to the main content' });
  const nav = h('nav', { className: 'site-nav', attrs: { 'aria-label': 'Pages' } },
    ...PAGES.map((p) => {
      const a = h('a', { href: p.href, textContent: p.label });
      if (p.id === current) a.setAttribute('aria-current', 'page');
      return a;
    }));
  const status = h('p', { className: 'site-status', dataset: { testid: 'status' }, attrs: { 'aria-live': 'polite' } });
  const brand = h('div', { className: 'brand' },
    h('p', { className: 'brand-name' }, h('a', { href: 'index.html', textContent: 'attnlab' }), h('span', { className: 'tagline', textContent: tagline })),
    status);
  const tools = h('div', { className: 'site-actions' }, ...actions);
  const header = h('header', { className: 'site-header' }, brand, nav, tools);
  document.body.prepend(skip, header);
  return {
    el: header,
    status(text) { if (status.textContent !== text) status.textContent = text; },
    engine(info, where = '') {
      this.status(engineStatus(info, where));
      status.title = info.threads > 1 ? 'Parallel work is split across a pool of workers sharing one memory'
        : `One thread: ${info.threadsReason ?? 'as asked'}`;
      status.dataset.threads = String(info.threads);
    },
  };
}

/** "WebAssembly SIMD engine, 2 threads" for { simd, threads } (+ where it runs, e.g. "in a worker"). */
export function engineStatus({ simd, threads = 1 }, where = '') {
  const count = `${threads} ${threads === 1 ? 'thread' : 'threads'}`;
  return `WebAssembly ${simd ? 'SIMD' : 'scalar'} engine, ${count}${where ? `, ${where}` : ''}`;
}
