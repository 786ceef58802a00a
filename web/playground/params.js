// Editors for the scoring functions' parameters (W, Wq, Wk, v, location W)
// and the self-attention projections (Wq, Wk, Wv): grids of number inputs.
import { createMatrixInput } from './matrix-input.js';
import { PARAMS } from './state.js';

const LAYOUT = {
  W: { box: 'param-W', row: (i) => `row ${i + 1}`, col: (j) => `c${j + 1}` },
  Wq: { box: 'param-Wq', row: (i) => `a${i + 1}`, col: (j) => `d${j + 1}` },
  Wk: { box: 'param-Wk', row: (i) => `a${i + 1}`, col: (j) => `d${j + 1}` },
  v: { box: 'param-v', row: () => 'v', col: (j) => `a${j + 1}` },
  L: { box: 'param-L', row: (i, s) => s.tokens[i], col: (j) => `d${j + 1}` },
  wq: { box: 'param-wq', row: (i) => `d${i + 1}`, col: (j) => `q${j + 1}` },
  wk: { box: 'param-wk', row: (i) => `d${i + 1}`, col: (j) => `k${j + 1}` },
  wv: { box: 'param-wv', row: (i) => `d${i + 1}`, col: (j) => `v${j + 1}` },
  wo: { box: 'param-wo', row: (i) => `z${i + 1}`, col: (j) => `o${j + 1}` },
};

export function bindParams(store) {
  const editors = Object.entries(LAYOUT).map(([name, spec]) => {
    const editor = createMatrixInput({
      id: `grid-${name}`, label: PARAMS[name].about, step: 0.01,
      rowName: (i) => spec.row(i, store.state), colName: spec.col,
      onEdit: (i, j, v) => store.update((s) => {
        if (PARAMS[name].vector) s[name][j] = v;
        else s[name][i][j] = v;
      }, { source: `param-${name}` }),
    });
    document.getElementById(spec.box).append(editor.el);
    return { name, editor, box: document.getElementById(spec.box) };
  });
  return {
    update(s, info) {
      for (const { name, editor, box } of editors) {
        if (info.source === `param-${name}` || box.closest('[hidden]')) continue;
        editor.update(PARAMS[name].vector ? [s[name]] : s[name], name === 'L' && (info.structural || info.source === 'names'));
      }
    },
  };
}
