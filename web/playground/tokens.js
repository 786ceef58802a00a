// The token editor: names, the embedding grid, add / remove / reorder tokens
// and dimensions. Edits go to the store; reads the state to draw.
import { h } from '../ui/dom.js';
import { createMatrixInput } from './matrix-input.js';
import { LIMITS, dims, nameError } from './state.js';
import { mulberry32, round, seedFor } from './rng.js';
const button = (text, label, action, i) => {
  const b = h('button', { type: 'button', className: 'icon', textContent: text, title: label });
  b.setAttribute('aria-label', label);
  b.dataset.action = action;
  if (i !== undefined) b.dataset.i = i;
  return b;
};

export function createTokenEditor(store) {
  const names = () => store.state.tokens;
  const grid = createMatrixInput({
    id: 'grid-x', label: 'Token embeddings', corner: '#',
    rowName: (i) => String(i), colName: (j) => `d${j + 1}`,
    rowLabel: (i) => `token ${i} (${names()[i] ?? ''})`, colLabel: (j) => `dim ${j + 1}`,
    onEdit: (i, j, v) => store.update((s) => { s.x[i][j] = v; }, { source: 'grid' }),
    rowHead: {
      title: 'token',
      width: 146, // the name (5rem, a 7-letter word whole) and three 20 px buttons: 3 dims still fit a 390 px phone
      create: (i) => {
        const input = h('input', { type: 'text', className: 'tok-name', maxLength: LIMITS.name, spellcheck: false, autocomplete: 'off' });
        input.dataset.i = i;
        input.dataset.testid = `token-${i}`;
        input.setAttribute('aria-label', `Name of token ${i}`);
        return [input, button('↑', `Move token ${i} up`, 'up', i), button('↓', `Move token ${i} down`, 'down', i), button('×', `Remove token ${i}`, 'remove', i)];
      },
      update: ([input, up, down, remove], i) => {
        if (input !== document.activeElement && input.value !== names()[i]) input.value = names()[i];
        const n = names().length;
        up.disabled = i === 0;
        down.disabled = i === n - 1;
        remove.disabled = n <= 1;
      },
    },
  });
  const addToken = h('button', { type: 'button', textContent: '+ Token' });
  addToken.dataset.action = 'add-token';
  const addDim = h('button', { type: 'button', textContent: '+ Dim' });
  addDim.dataset.action = 'add-dim';
  const removeDim = h('button', { type: 'button', textContent: '− Dim' });
  removeDim.dataset.action = 'remove-dim';
  const size = h('span', { className: 'muted' });
  const bar = h('div', { className: 'row-actions' }, addToken, addDim, removeDim, size);
  const el = h('div', { className: 'tokens' }, grid.el, bar);

  el.addEventListener('input', (ev) => {
    const input = ev.target;
    if (!input.classList.contains('tok-name')) return;
    const err = nameError(input.value);
    input.toggleAttribute('aria-invalid', Boolean(err));
    input.title = err ? `A token name ${err}` : '';
    if (!err) store.update((s) => { s.tokens[Number(input.dataset.i)] = input.value; }, { source: 'names' });
  });
  el.addEventListener('change', (ev) => {
    const input = ev.target;
    if (input.classList.contains('tok-name') && input.hasAttribute('aria-invalid')) {
      input.value = names()[Number(input.dataset.i)];
      input.removeAttribute('aria-invalid');
    }
  });
  el.addEventListener('click', (ev) => {
    const b = ev.target.closest('button[data-action]');
    if (!b) return;
    const i = Number(b.dataset.i);
    const act = b.dataset.action;
    store.update((s) => {
      const n = s.tokens.length;
      const swap = (a, c) => { [s.tokens[a], s.tokens[c]] = [s.tokens[c], s.tokens[a]]; [s.x[a], s.x[c]] = [s.x[c], s.x[a]]; [s.L[a], s.L[c]] = [s.L[c], s.L[a]]; };
      if (act === 'up' && i > 0) swap(i, i - 1);
      else if (act === 'down' && i < n - 1) swap(i, i + 1);
      else if (act === 'remove' && n > 1) { s.tokens.splice(i, 1); s.x.splice(i, 1); s.L.splice(i, 1); }
      else if (act === 'add-token' && n < LIMITS.tokens) {
        const next = mulberry32(seedFor(s.dataSeed, `token${n}`));
        s.tokens.push(`t${n + 1}`);
        s.x.push(s.x[0].map(() => round(next() * 2 - 1, 2)));
      } else if (act === 'add-dim' && dims(s) < LIMITS.dims) s.x.forEach((r) => r.push(0));
      else if (act === 'remove-dim' && dims(s) > 1) s.x.forEach((r) => r.pop());
    }, { source: 'tokens', structural: true });
  });

  return {
    el,
    update(s, info) {
      if (info.source === 'grid') return;
      grid.update(s.x);
      const n = s.tokens.length;
      const d = dims(s);
      addToken.disabled = n >= LIMITS.tokens;
      addDim.disabled = d >= LIMITS.dims;
      removeDim.disabled = d <= 1;
      const text = `${n} tokens × ${d} dims`;
      if (size.textContent !== text) size.textContent = text;
    },
  };
}
