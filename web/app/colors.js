// Colour scales as 256-entry RGB tables, built once and indexed per cell.
// Viridis (perceptually uniform, colour-blind safe) from its published stops.
const VIRIDIS_STOPS = [
  [68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142],
  [31, 158, 137], [53, 183, 121], [109, 205, 89], [180, 222, 44], [253, 231, 37],
];

function buildTable(stops) {
  const table = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) {
    const t = (i / 255) * (stops.length - 1);
    const k = Math.min(Math.floor(t), stops.length - 2);
    const f = t - k;
    for (let c = 0; c < 3; c++) table[i * 3 + c] = stops[k][c] + f * (stops[k + 1][c] - stops[k][c]);
  }
  return table;
}

export const VIRIDIS = buildTable(VIRIDIS_STOPS);

/** Index into a 256-entry table for value v on [lo, hi]. */
export function colorIndex(v, lo, hi) {
  if (!(hi > lo)) return 0;
  const t = (v - lo) / (hi - lo);
  return Math.max(0, Math.min(255, Math.round(t * 255)));
}

/** 'rgb(r g b)' of a table entry. */
export function cssColor(table, index) {
  return `rgb(${table[index * 3]} ${table[index * 3 + 1]} ${table[index * 3 + 2]})`;
}

/** Black or white text, whichever reads better on a table entry. */
export function textColor(table, index) {
  const [r, g, b] = [table[index * 3], table[index * 3 + 1], table[index * 3 + 2]];
  return 0.299 * r + 0.587 * g + 0.114 * b > 140 ? '#111' : '#fff';
}
