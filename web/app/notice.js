// The notice bar (role="status"): bad links, import errors, confirmations. Text only.
export function createNotice(el) {
  const text = el.querySelector('.notice-text');
  el.querySelector('button').addEventListener('click', () => { el.hidden = true; });
  return {
    /** kind: 'info' | 'error'. */
    show(message, kind = 'info') {
      el.hidden = false;
      el.dataset.kind = kind;
      text.textContent = message;
    },
    hide() { el.hidden = true; },
  };
}
