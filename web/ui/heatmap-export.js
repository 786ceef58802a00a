// A heatmap as a standalone labelled figure: SVG text, or a PNG rasterised from it.
// Used through heatmap.svg(title) / heatmap.png(title); exported for tests of the layout.
//   figureLayout(rows, cols, rowLabels, colLabels) -> { cell, left, top, width, height }
//     cell = clamp(round(480 / max(rows, cols)), 6, 48) px; label bands are 7 px per
//     character of the longest label + 12; title 34 px; legend 56 px
//   heatmapSvg({ matrix, scale, labels }, title) -> { svg, width, height }
//   svgToPng({ svg, width, height }, ratio = 2) -> Promise<Blob>
import { MASKED, TABLES, colorOf } from './colors.js';
import { legendTickLabels } from './ticks.js';

const esc = (t) => String(t).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const FONT = 'font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif"';

export function figureLayout(rows, cols, rowLabels, colLabels) {
  const cell = Math.max(6, Math.min(48, Math.round(480 / Math.max(rows, cols))));
  const longest = (labels) => Math.max(1, ...labels.map((t) => [...t].length));
  const left = 12 + 7 * Math.min(24, longest(rowLabels));
  const top = 34 + 12 + 7 * Math.min(24, longest(colLabels));
  const width = Math.max(left + cols * cell + 16, 300);
  const height = top + rows * cell + 56;
  return { cell, left, top, width, height };
}

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
  // the same ticks and labels as the legend on screen (powers of ten on tiny scales, none colliding)
  for (const { label, at } of legendTickLabels(scale.lo, scale.hi, lw)) {
    out.push(`<text x="${(12 + at * lw).toFixed(1)}" y="${ly + 24}" font-size="10" text-anchor="middle" fill="#555">${esc(label)}</text>`);
  }
  out.push(`<text x="${12 + lw + 10}" y="${ly + 9}" font-size="10" fill="#555">${esc(legend ?? '')}${scale.masked ? ` · grey: masked` : ''}</text>`);
  if (scale.masked) out.push(`<desc>masked cells rgb(${MASKED.join(',')})</desc>`);
  out.push('</svg>');
  return { svg: out.join(''), width: L.width, height: L.height };
}

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
