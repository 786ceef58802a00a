// Export and import: a heatmap as a labelled SVG or PNG figure, the state and
// every matrix as JSON or CSV, and reading a JSON state file back (validated).
// Builds files from the state and computed steps; the page only downloads them.
import { MASKED, colorOf, ticks, TABLES } from './colors.js';
import { num } from './explain.js';
import { serialize, validate } from './state.js';

const esc = (t) => String(t).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const FONT = 'font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif"';

/**
 * The figure layout, documented so a test can check an export's size:
 * cell = clamp(round(480 / max(rows, cols)), 6, 48) px; label bands are
 * 7 px per character of the longest label + 12; title 34 px; legend 56 px.
 */
export function figureLayout(rows, cols, rowLabels, colLabels) {
  const cell = Math.max(6, Math.min(48, Math.round(480 / Math.max(rows, cols))));
  const longest = (labels) => Math.max(1, ...labels.map((t) => [...t].length));
  const left = 12 + 7 * Math.min(24, longest(rowLabels));
  const top = 34 + 12 + 7 * Math.min(24, longest(colLabels));
  const width = Math.max(left + cols * cell + 16, 300);
  const height = top + rows * cell + 56;
  return { cell, left, top, width, height };
}

/** A heatmap ({ matrix, scale, labels }) as an SVG document string. */
export function heatmapSvg(heatmap, title) {
  const { matrix: m, scale } = heatmap;
  const { rows: rl, cols: cl, legend } = heatmap.labels;
  const L = figureLayout(m.rows, m.cols, rl, cl);
  const { cell, left, top } = L;
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${L.width}" height="${L.height}" viewBox="0 0 ${L.width} ${L.height}" ${FONT}>`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="12" y="22" font-size="15" font-weight="600" fill="#1d1f24">${esc(title)}</text>`];
  const fs = Math.max(7, Math.min(12, cell * 0.8));
  const stride = Math.max(1, Math.ceil(10 / cell));
  for (let i = 0; i < m.rows; i += stride) {
    out.push(`<text x="${left - 6}" y="${top + (i + 0.5) * cell}" font-size="${fs}" text-anchor="end" dominant-baseline="middle" fill="#333">${esc(rl[i])}</text>`);
  }
  for (let j = 0; j < m.cols; j += stride) {
    const x = left + (j + 0.5) * cell;
    out.push(`<text transform="translate(${x} ${top - 6}) rotate(-90)" font-size="${fs}" dominant-baseline="middle" fill="#333">${esc(cl[j])}</text>`);
  }
  for (let i = 0; i < m.rows; i++) {
    for (let j = 0; j < m.cols; j++) {
      const [r, g, b] = colorOf(scale, m.data[i * m.cols + j]);
      out.push(`<rect x="${left + j * cell}" y="${top + i * cell}" width="${cell}" height="${cell}" fill="rgb(${r},${g},${b})"/>`);
    }
  }
  const ly = top + m.rows * cell + 14;
  const lw = Math.min(240, L.width - 24);
  const table = TABLES[scale.scheme];
  out.push(`<defs><linearGradient id="lg">${Array.from({ length: 11 }, (_, k) => {
    const c = Math.round((k / 10) * 255) * 3;
    return `<stop offset="${k * 10}%" stop-color="rgb(${table[c]},${table[c + 1]},${table[c + 2]})"/>`;
  }).join('')}</linearGradient></defs>`);
  out.push(`<rect x="12" y="${ly}" width="${lw}" height="10" fill="url(#lg)"/>`);
  ticks(scale).forEach((v, k, all) => {
    out.push(`<text x="${12 + (k / (all.length - 1)) * lw}" y="${ly + 24}" font-size="10" text-anchor="middle" fill="#555">${esc(num(Number(v.toPrecision(3))))}</text>`);
  });
  out.push(`<text x="${12 + lw + 10}" y="${ly + 9}" font-size="10" fill="#555">${esc(legend)}${scale.masked ? ` · grey: masked` : ''}</text>`);
  if (scale.masked) out.push(`<desc>masked cells rgb(${MASKED.join(',')})</desc>`);
  out.push('</svg>');
  return { svg: out.join(''), width: L.width, height: L.height };
}

/** Rasterises an SVG figure at `ratio` device pixels per px; resolves to a PNG Blob. */
export async function svgToPng({ svg, width, height }, ratio = 2) {
  const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
  try {
    const img = new Image();
    img.src = url;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = width * ratio;
    canvas.height = height * ratio;
    const ctx = canvas.getContext('2d');
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    return await new Promise((ok, fail) => canvas.toBlob((b) => (b ? ok(b) : fail(new Error('PNG encoding failed'))), 'image/png'));
  } finally {
    URL.revokeObjectURL(url);
  }
}

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
  if (r.compare) { add('compare_weights', r.compare.weights, null, true); add('difference', r.compare.diff, null, true); }
  return list;
}

/** The JSON export: the state (importable) and every matrix (masked scores as null). */
export function exportJson(s, r) {
  return JSON.stringify({
    format: 'attnlab-playground', state: serialize(s),
    matrices: matrixList(s, r).map(({ name, head, rowLabels, colLabels, matrix }) => ({ name, ...(head === null ? {} : { head }), rows: rowLabels, cols: colLabels, values: rowsOf(matrix) })),
  }, null, 1);
}

const csvCell = (t) => (/[",\n\r]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t);

/** The CSV export: one tidy row per matrix cell (matrix, head, row, col, labels, value; masked = -inf). */
export function exportCsv(s, r) {
  const lines = ['matrix,head,row,col,row_label,col_label,value'];
  for (const { name, head, rowLabels, colLabels, matrix: m } of matrixList(s, r)) {
    for (let i = 0; i < m.rows; i++) {
      for (let j = 0; j < m.cols; j++) {
        const v = m.data[i * m.cols + j];
        lines.push([name, head ?? '', i + 1, j + 1, csvCell(rowLabels[i]), csvCell(colLabels[j]), v === -Infinity ? '-inf' : String(Number(v.toPrecision(7)))].join(','));
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
  return validate(body);
}

/** Starts a download of `blob` named `name`. */
export function download(name, blob) {
  const url = URL.createObjectURL(blob);
  const a = Object.assign(document.createElement('a'), { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
