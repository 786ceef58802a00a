// Export and import: a heatmap as a labelled SVG or PNG figure, the state and
// every matrix as JSON or CSV, and reading a JSON state file back (validated).
// Builds files from the state and computed steps; the page only downloads them.
import { csvLine } from '../ui/download.js';
import { codec, serialize } from './state.js';

const rowsOf = (m) => Array.from({ length: m.rows }, (_, i) => Array.from(m.data.subarray(i * m.cols, (i + 1) * m.cols), (v) => (v === -Infinity ? null : v)));

/** Every computed matrix with its axis labels: [{ name, head, rowLabels, colLabels, matrix }]. */
export function matrixList(s, r) {
  const dimsOf = (m) => Array.from({ length: m.cols }, (_, j) => `d${j + 1}`);
  const list = [];
  const add = (name, m, head, square) => list.push({ name, head, rowLabels: s.tokens, colLabels: square ? s.tokens : dimsOf(m), matrix: m });
  if (r.mode === 'self') { add('q', r.q, null, false); add('k', r.k, null, false); add('v', r.v, null, false); }
  r.scores.forEach((m, hd) => add('scores', m, r.mode === 'self' ? hd : null, true));
  r.weights.forEach((m, hd) => add('weights', m, r.mode === 'self' ? hd : null, true));
  add('context', r.context, null, false);
  if (r.output) add('output', r.output, null, false);
  // self-attention compares the enlarged head's weights
  const shown = r.mode === 'self' ? s.head : null;
  if (r.compare) { add('compare_weights', r.compare.weights, shown, true); add('difference', r.compare.diff, shown, true); }
  return list;
}

/** The JSON export: the state (importable) and every matrix (masked scores as null). */
export function exportJson(s, r) {
  return JSON.stringify({
    format: 'attnlab-playground', state: serialize(s),
    matrices: matrixList(s, r).map(({ name, head, rowLabels, colLabels, matrix }) => ({ name, ...(head === null ? {} : { head }), rows: rowLabels, cols: colLabels, values: rowsOf(matrix) })),
  }, null, 1);
}


/**
 * The CSV export: one tidy row per matrix cell (matrix, head, row, col, labels, value;
 * masked = -inf; head, row and col counted from 0, as the page counts heads and positions). Token names go through csvField, so a name such as "=1+1" is written
 * as text ("'=1+1"), never as a formula a spreadsheet would run.
 */
export function exportCsv(s, r) {
  const lines = ['matrix,head,row,col,row_label,col_label,value'];
  for (const { name, head, rowLabels, colLabels, matrix: m } of matrixList(s, r)) {
    for (let i = 0; i < m.rows; i++) {
      for (let j = 0; j < m.cols; j++) {
        const v = m.data[i * m.cols + j];
        lines.push(csvLine([name, head ?? '', i, j, rowLabels[i], colLabels[j], v === -Infinity ? v : Number(v.toPrecision(7))]));
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

const MAX_FILE = 4 << 20;

/** Reads an exported JSON file (or a bare state object); resolves to { state } or { error }. */
export async function importJson(file) {
  if (file.size > MAX_FILE) return { error: `the file is ${(file.size / 1048576).toFixed(1)} MB; a state file is under 4 MB` };
  let raw;
  try {
    raw = JSON.parse(await file.text());
  } catch (err) {
    return { error: `the file is not JSON (${err.message})` };
  }
  const body = raw && typeof raw === 'object' && raw.format === 'attnlab-playground' ? raw.state : raw;
  const r = codec.fromObject(body, { strict: true });
  return r.error ? { error: r.error } : { state: r.state };
}
