// Ticks on round values (1, 2, 2.5 or 5 × 10^k), shared by heatmap legends and line charts.
//   niceStep(span, count)        the round step that gives about `count` intervals over `span`
//   niceTicks(lo, hi, count=5)   { step, values }: multiples of the step inside [lo, hi]
//   niceDomain(lo, hi, count=4)  { lo, hi, step, values }: [lo, hi] widened outward to the step
//                                (for chart axes, whose ends then fall on round values)

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
