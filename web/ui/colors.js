// Colour scales as 256-entry RGB tables, sampled from d3-scale-chromatic's
// reference ramps at build time (scripts/vendor.mjs) and indexed per cell: viridis (sequential, for weights) and
// RdBu (diverging around 0, for signed values: blue negative, red positive).
//   TABLES.sequential | TABLES.diverging   Uint8ClampedArray(256 * 3), RGB
//   MASKED                                  [r, g, b] of a masked (−∞) cell
//   scaleFor(kind, data)                    { scheme, lo, hi, masked } for 'weights' | 'signed' | 'unit'
//   colorIndex(v, lo, hi), colorOf(scale, v), textColor([r, g, b]) -> '#111' | '#fff'
import { RDBU, VIRIDIS } from '../vendor/colortables.js';

export const TABLES = {
  sequential: VIRIDIS,
  diverging: RDBU,
};
/** Masked (−∞) cells. */
export const MASKED = [214, 214, 220];

/**
 * The scale for a matrix: weights are sequential on [0, max] (diverging if the
 * sum normalisation made any negative); other kinds are diverging, symmetric about 0.
 */
export function scaleFor(kind, data) {
  let lo = Infinity;
  let hi = -Infinity;
  let masked = false;
  for (let p = 0; p < data.length; p++) {
    const v = data[p];
    if (v === -Infinity) { masked = true; continue; }
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (lo === Infinity) { lo = 0; hi = 1; }
  if (kind === 'unit') return { scheme: 'sequential', lo: 0, hi: 1, masked };
  if (kind === 'weights' && lo >= 0) return { scheme: 'sequential', lo: 0, hi: hi > 0 ? hi : 1, masked };
  const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
  return { scheme: 'diverging', lo: -m, hi: m, masked };
}

/** Index into a 256-entry table for v on [lo, hi]. */
export function colorIndex(v, lo, hi) {
  const t = (v - lo) / (hi - lo);
  return t <= 0 ? 0 : t >= 1 ? 255 : Math.round(t * 255);
}

/** The [r, g, b] for value v under a scale. */
export function colorOf(scale, v) {
  if (v === -Infinity) return MASKED;
  const t = TABLES[scale.scheme];
  const c = colorIndex(v, scale.lo, scale.hi) * 3;
  return [t[c], t[c + 1], t[c + 2]];
}

/** Black or white text, whichever reads better on an [r, g, b] background. */
export function textColor([r, g, b]) {
  return 0.299 * r + 0.587 * g + 0.114 * b > 140 ? '#111' : '#fff';
}
