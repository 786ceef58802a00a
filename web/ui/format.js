// Numbers as every page shows them: a real minus sign (−), and never "−0.00"
// (a value that rounds to zero at the shown precision is written without a sign).
//   fixed(v, places)   v.toFixed(places) with those two rules; ±∞ as "∞" / "−∞"
//   num(v, places=4)   up to `places` decimals, trailing zeros dropped ("0.5", "−1.25")
//   tick(v, step)      a tick label for a value on a grid of `step` (as many decimals as the step has)
//   duration(seconds)  "12.3 s" under a minute, else "2 min 5 s": rounded once, so never "1 min 60 s" or "60.0 s"

/** v to `places` decimals, real minus sign, no negative zero. */
export function fixed(v, places = 2) {
  if (v === Infinity) return '∞';
  if (v === -Infinity) return '−∞';
  if (Number.isNaN(v)) return 'NaN';
  let t = v.toFixed(places);
  if (/^-0(\.0*)?$/.test(t)) t = t.slice(1);
  return t.startsWith('-') ? `−${t.slice(1)}` : t;
}

/** Up to `places` decimals with trailing zeros dropped. */
export function num(v, places = 4) {
  if (!Number.isFinite(v)) return fixed(v, 0);
  const t = fixed(v, places);
  return t.includes('.') ? t.replace(/\.?0+$/, '') : t;
}

/** A tick label: the value at the precision its grid step needs. */
export function tick(v, step) {
  const s = Number(step.toPrecision(6));
  const frac = String(s).includes('e-') ? Number(String(s).split('e-')[1]) : (String(s).split('.')[1] ?? '').length;
  return fixed(v, frac);
}

/** A time span as a person reads it: tenths of a second under a minute, whole seconds past it. */
export function duration(seconds) {
  const s = Math.max(0, seconds);
  // rounded before it is split, so 119.6 s is "2 min 0 s" and 59.96 s is "1 min 0 s"
  if (Math.round(s * 10) < 600) return `${fixed(s, 1)} s`;
  const whole = Math.round(s);
  return `${Math.floor(whole / 60)} min ${whole % 60} s`;
}
