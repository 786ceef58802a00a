// Ticks on round values (1, 2, 2.5 or 5 × 10^k), shared by heatmap legends and line charts.
//   niceStep(span, count)        the round step that gives about `count` intervals over `span`
//   niceTicks(lo, hi, count=5)   { step, values }: multiples of the step inside [lo, hi]
//   niceDomain(lo, hi, count=4)  { lo, hi, step, values }: [lo, hi] widened outward to the step
//                                (for chart axes, whose ends then fall on round values)
//   legendLabel(v, step)         a legend tick's label (powers of ten on very fine or coarse grids)
//   legendTickLabels(lo, hi, width, count=4)  [{ value, label, at }] that fit a legend `width` px wide

import { num, tick } from './format.js';

export function niceStep(span, count = 5) {
  if (!(span > 0) || !Number.isFinite(span)) return 1;
  const raw = span / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  const nice = f < 1.5 ? 1 : f < 2.25 ? 2 : f < 3.5 ? 2.5 : f < 7.5 ? 5 : 10;
  return nice * mag;
}

const snap = (v, step) => {
  const r = Math.round(v / step) * step;
  const clean = Number(r.toPrecision(12));
  return Object.is(clean, -0) ? 0 : clean;
};

export function niceTicks(lo, hi, count = 5) {
  if (!(hi > lo)) return { step: 1, values: [snap(lo, 1)] };
  const step = niceStep(hi - lo, count);
  const first = Math.ceil(lo / step - 1e-9);
  const last = Math.floor(hi / step + 1e-9);
  const values = [];
  for (let k = first; k <= last; k++) values.push(snap(k * step, step));
  return { step, values };
}

export function niceDomain(lo, hi, count = 4) {
  if (!(hi > lo)) hi = lo + 1;
  const step = niceStep(hi - lo, count);
  const a = snap(Math.floor(lo / step + 1e-9) * step, step);
  const b = snap(Math.ceil(hi / step - 1e-9) * step, step);
  const values = [];
  for (let v = a, k = 0; v <= b + step / 2 && k < 100; k++, v = snap(a + k * step, step)) values.push(v);
  return { lo: a, hi: b, step, values };
}

const SUPERSCRIPT = { '-': '⁻', 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹' };

/**
 * A legend tick's label: 0 is "0"; on a grid finer than 0.001 or coarser than 10⁵
 * a power of ten ("2.5×10⁻⁵") instead of a row of zeros ("0.000025"), which made
 * neighbouring labels run into each other; otherwise as many decimals as the step has.
 */
export function legendLabel(v, step) {
  if (v === 0) return '0';
  if (step >= 1e-3 && step < 1e5) return tick(v, step);
  const e = Math.floor(Math.log10(step) + 1e-9);
  const mantissa = num(v / 10 ** e, 1);
  return `${mantissa}×10${[...String(e)].map((c) => SUPERSCRIPT[c]).join('')}`;
}

/** Width of a legend label in px (0.7rem tabular figures: about 7 px a character, 2 px gap). */
const LABEL_PX = 7;

/**
 * Ticks for a legend `width` px wide: round values with labels that do not
 * collide (fewer ticks when the labels are long or the legend narrow).
 * -> [{ value, label, at }] with `at` the position in [0, 1] along the bar.
 */
export function legendTickLabels(lo, hi, width, count = 4) {
  for (let n = count; ; n--) {
    const { step, values } = niceTicks(lo, hi, n);
    const labels = values.map((v) => legendLabel(v, step));
    const longest = Math.max(...labels.map((t) => [...t].length));
    const gap = values.length > 1 && hi > lo ? (step / (hi - lo)) * width : Infinity;
    if (gap >= longest * LABEL_PX + 8 || n <= 1) {
      return values.map((value, k) => ({ value, label: labels[k], at: hi > lo ? (value - lo) / (hi - lo) : 0 }));
    }
  }
}
